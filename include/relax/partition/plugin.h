// BYOC codegen plugins: the C++ interface in-tree plugins implement (backends/plugins/<name>/),
// the registry, and the read-only view of a partitioned region a plugin's codegen receives.
// Out-of-tree plugins implement the C ABI of relax/partition/plugin_c_api.h instead; the loader
// (LoadPluginLibrary) wraps them in this same interface, so the passes see one kind of plugin.
//
// The flow (docs/byoc.md): fuse-ops-by-pattern turns each match of a plugin's pattern table
// into a composite function; merge-composite merges adjacent composites of one plugin into a
// region function tagged {Codegen = "<plugin>"}; run-codegen hands each region to the plugin's
// Codegen and replaces its call with `call_dps_library(extern(function), (payload, args...))`.
#ifndef RELAX_PARTITION_PLUGIN_H_
#define RELAX_PARTITION_PLUGIN_H_

#include <memory>
#include <string>
#include <vector>

#include "relax/ir/module.h"
#include "relax/target/target.h"
#include "relax/transform/pass_context.h"

namespace relax::partition {

/// One value of a region: a parameter, an intermediate or an output of its ops.
struct RegionValue {
  std::string name;
  StructInfo sinfo;                        // a Tensor StructInfo (symbolic dims as PrimExprs)
  int param_index = -1;                    // >= 0: the region's parameter of that index
  const ConstantNode* constant = nullptr;  // the constant a parameter is bound to at the call
};

/// One op of a region, in execution order.
struct RegionOp {
  std::string op;           // "relax.nn.conv2d"
  std::string composite;    // the pattern that took it ("dnnl.conv2d_bias_relu")
  int composite_index = 0;  // which composite call of the region (0, 1, ...)
  std::vector<int> inputs;  // value ids (index into Region::values); -1: a non-tensor argument
  std::vector<Expr> args;   // the call's arguments (non-tensor ones: shapes, prim values)
  int output = -1;          // value id
  Attrs attrs;
};

/// What a plugin's Codegen sees: a region with its ops flattened out of its composites.
struct Region {
  std::string name;    // the region function ("dnnl_region_0")
  std::string plugin;  // "dnnl"
  std::string text;    // the region and its composite functions, printed as text IR
  std::vector<RegionValue> values;
  std::vector<RegionOp> ops;
  std::vector<int> params;              // value ids of the region's parameters, in order
  std::vector<int> outputs;             // value ids of its results, in order
  std::vector<std::string> composites;  // the pattern of each composite call, in order
};

/// What a plugin's Codegen returns for one region.
struct RegionCode {
  /// The runtime function (RelaxPackedFunc, runtime/c_api.h) that runs the region. It receives
  /// the payload (if any) as a string, then the region's parameters, then its outputs
  /// (destination-passing style: the VM allocates them).
  std::string function;
  /// Passed as the first argument when non-empty (text: a descriptor of the region).
  std::string payload;
  /// An ELF relocatable object (x86-64, PIC) linked into the artifact's kernel library; it may
  /// define `function`.
  std::string object;
  /// A shared library that defines `function` when the object does not: a file name the
  /// loader finds (RELAX_PLUGIN_PATH, the directory of the artifact, the runtime's library
  /// directory, then the system's search path) or an absolute path.
  std::string library;
  /// Where `function` takes its tensors on a GPU target: false = host memory (the VM copies
  /// device tensors to the host for it), true = on the target's device (DLTensor.device is the
  /// device and `data` its memory, e.g. a CUDA device pointer; place-devices copies host
  /// tensors there).
  bool operands_on_device = false;
};

/// An in-tree or loaded codegen plugin.
class CodegenPlugin {
 public:
  virtual ~CodegenPlugin() = default;
  /// Its name ("dnnl"): the prefix of its patterns and the value of the Codegen attribute.
  virtual std::string Name() const = 0;
  /// Its pattern table in the text form of relax/partition/pattern.h, highest priority first;
  /// pattern names are given without the plugin prefix.
  virtual std::string PatternTable() const = 0;
  /// The target kinds it applies to ({"cpu"}, {"cuda"}); empty: every target.
  virtual std::vector<std::string> TargetKinds() const = 0;
  /// Whether merge-composite may put several composites in one region (the codegen then
  /// handles chains); false: one composite per region.
  virtual bool MergeRegions() const { return true; }
  /// Generates the code of one region. Errors: relax::Error with the reason (run-codegen adds
  /// the plugin and region names).
  virtual RegionCode Codegen(const Region& region, const Target& target) const = 0;
};

/// True for a plugin name relaxc accepts: a letter or _, then letters, digits and _ (names
/// become part of symbols, `relax_byoc_<name>_<region>`, and of reports).
bool IsValidPluginName(const std::string& name);

/// Adds `p` to the registry. Error when a plugin of that name is already registered.
void RegisterPlugin(std::shared_ptr<const CodegenPlugin> p);
/// The plugin named `name`, or null.
const CodegenPlugin* FindPlugin(const std::string& name);
/// The registered plugin names, sorted.
std::vector<std::string> PluginNames();

/// Loads an out-of-tree plugin (a shared library exporting `relax_plugin_get_info`, see
/// plugin_c_api.h), registers it and returns its name. Errors name the library: cannot be
/// opened, no entry point, ABI version mismatch, bad pattern table, duplicate name.
std::string LoadPluginLibrary(const std::string& path);

/// The plugins a compilation uses, in order: the PassContext option "partition.plugins" (a
/// comma list of registered names; "none" or empty: none), keeping those whose TargetKinds
/// include the target's kind. Errors: an unknown name (listing the registered ones), or a
/// named plugin that does not support the target.
std::vector<const CodegenPlugin*> ActivePlugins(const PassContext& ctx);

/// Builds the Region view of the region function `name` of `mod` (its composites resolved),
/// called with `call_args` (which tells the constant parameters). Error when `name` is not a
/// region of composite calls.
Region MakeRegion(const IRModule& mod, const std::string& name, const std::vector<Expr>& call_args);

/// The attribute names the partition passes use on functions.
inline constexpr const char* kCompositeAttr = "Composite";  // composite: the pattern name
inline constexpr const char* kCodegenAttr = "Codegen";      // region: the plugin name

}  // namespace relax::partition

#endif  // RELAX_PARTITION_PLUGIN_H_
