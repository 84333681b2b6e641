// Backend: what one code generator (backends/<name>/) provides to the compiler. A backend
// registers itself once (its `register.cc`, called from backends/registry.cc); the compiler
// reaches it only through this interface, by the target's kind:
//  - the target attributes it accepts and their validation;
//  - its default schedule rules (lib/schedule applies them in the `schedule` pass);
//  - its codegen hook (scheduled, flattened PrimFuncs -> a loadable kernel library);
//  - the runtime device API its kernels run on (a DLPack device type);
//  - the artifact sections it adds beside "elf", "params" and "executable".
#ifndef RELAX_TARGET_BACKEND_H_
#define RELAX_TARGET_BACKEND_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "relax/ir/module.h"
#include "relax/ir/tir.h"
#include "relax/target/target.h"

namespace relax {

/// One schedule rule: (target, op pattern kind, predicate on shapes/dtypes) -> a TIR
/// transformation. `match` sees an unscheduled PrimFunc (the TE builder's stage form) and its
/// pattern kind (derived from its stages: "injective", "reduction", "anchor-epilogue" or
/// "multi-stage"); `apply` returns the scheduled PrimFunc. The schedule pass tries a backend's
/// rules in order and applies the first that matches; its name is recorded in the PrimFunc's
/// `schedule` attribute (shown by --print-ir-after=schedule and counted by --stats).
///
/// A rule may have tunable parameters (`space`): the candidate settings for one PrimFunc on a
/// target, the first being the rule's default. While `apply` runs, the chosen setting is on the
/// PrimFunc as `tuning.<name>` attributes (TuningParam reads them): the default, a tuning
/// database's record for this kernel and machine (relax/schedule/tuning.h), or a forced
/// setting while `relaxc tune` measures the candidates.
using TuningParams = std::map<std::string, int64_t>;
struct ScheduleRule {
  using Match =
      std::function<bool(const tir::PrimFunc& f, const std::string& pattern, const Target& t)>;
  using Apply = std::function<tir::PrimFunc(const tir::PrimFunc& f, const Target& t)>;
  using Space = std::function<std::vector<TuningParams>(const tir::PrimFunc& f, const Target& t)>;
  ScheduleRule(std::string name, std::string description, Match match, Apply apply,
               Space space = nullptr)
      : name(std::move(name)),
        description(std::move(description)),
        match(std::move(match)),
        apply(std::move(apply)),
        space(std::move(space)) {}

  std::string name;         // "<target kind>.<what>", e.g. "cpu.anchor-epilogue"
  std::string description;  // one line, for docs and `relax-opt --help`
  Match match;
  Apply apply;
  /// The candidate settings for a PrimFunc this rule matched, default first; empty (or no
  /// function): nothing to tune.
  Space space;
};

/// The value of tunable parameter `name` while a rule's `apply` runs (the PrimFunc's
/// `tuning.<name>` attribute), or `fallback` when absent or not an integer.
int64_t TuningParam(const tir::PrimFunc& f, const std::string& name, int64_t fallback);

/// What the codegen hook reports per device kernel (GPU backends; `relaxc compile --stats`).
struct KernelReport {
  std::string name;
  std::string rule;       // the schedule rule that scheduled it
  bool fallback = false;  // rebuilt as one thread after its first build failed
  std::string failure;    // why the first build failed (fallback only)
  int registers = -1;     // per thread (cuda), -1 when unknown
  int spill_bytes = -1;   // spill stores + loads (cuda), -1 when unknown
  int shared_bytes = 0;   // static shared memory per block
  size_t binary_bytes = 0;
};

/// Options of the codegen hook.
struct CodegenOptions {
  std::ostream* dump_mlir = nullptr;  // if set: the MLIR of the kernels, before lowering
  std::ostream* dump_llvm = nullptr;  // if set: the optimized LLVM IR
  int opt_level = 3;
  std::ostream* warnings = nullptr;                    // if set: "warning: ..." lines
  std::vector<KernelReport>* kernel_report = nullptr;  // if set: one entry per device kernel
  /// false: stop after the host objects are emitted (no linker runs) and return their bytes,
  /// concatenated, instead of a shared object; for the in-process compile fuzzer
  /// (test/fuzz/compile_fuzzer.cc), which must not spawn a linker per input.
  bool link = true;
  /// relaxc compile --bounds-check: host kernels check every load's and store's index against
  /// its buffer and fail with an error naming kernel, buffer and index (GPU device kernels are
  /// not checked).
  bool bounds_check = false;
  /// If set: called as kernels finish compiling, with what is counted ("kernels": host kernels,
  /// counted as the object file of their shard is emitted; "device kernels": GPU kernels), how
  /// many are done and how many there are (first with done = 0). Host kernels compile on
  /// several threads at once: it must be thread-safe, and cheap.
  std::function<void(const char* unit, size_t done, size_t total)> progress = nullptr;
};

/// A named artifact section a backend adds (runtime/artifact_format.h: name, bytes, alignment).
struct BackendSection {
  std::string name;
  std::string bytes;
  uint64_t alignment = 8;
};

/// A target attribute a backend accepts: `-name=VALUE`.
struct TargetAttrInfo {
  std::string name;
  std::string help;  // e.g. "LLVM CPU name or 'native' (default)"
};

class Backend {
 public:
  virtual ~Backend() = default;
  /// The target kind this backend implements ("cpu").
  virtual std::string Kind() const = 0;
  /// The `-key=value` attributes Target::Parse accepts for this kind.
  virtual std::vector<TargetAttrInfo> Attributes() const = 0;
  /// Checks attribute values; throws relax::Error naming the attribute. Default: accepts all.
  virtual void ValidateTarget(const Target& t) const { (void)t; }
  /// Default schedule rules, most specific first.
  virtual const std::vector<ScheduleRule>& ScheduleRules() const = 0;
  /// The machine a tuning database's records are keyed by: records measured on one machine
  /// apply to targets with the same key. Default: the target kind. cpu: the LLVM CPU name
  /// `-mcpu` resolves to ("znver5", "sapphirerapids", or the name given).
  virtual std::string MachineKey(const Target& t) const { return t.kind; }
  /// The channel block of 2-D convolutions' blocked layouts (NCHW<b>c) the alter-layout pass
  /// chooses for this target; 0 (default): convolutions stay NCHW. cpu: 16 f32 channels.
  virtual int64_t ConvChannelBlock(const Target& t) const {
    (void)t;
    return 0;
  }
  /// True if the target's schedule rules take a whole attention (matmul, score epilogue,
  /// softmax, matmul) as one kernel, so the fuse-attention pass groups it
  /// (relax/transform/fuse_attention.h). Default false. cpu: true (online softmax, one pass
  /// over the keys: relax/schedule/attention.h).
  virtual bool FusesAttention(const Target& t) const {
    (void)t;
    return false;
  }
  /// The DLPack device type (DLDeviceType) the kernels run on (kDLCPU = 1).
  virtual int DeviceType() const = 0;
  /// Codegen hook: compiles every (scheduled, flattened) PrimFunc of `mod` into one loadable
  /// library (returned bytes; the artifact's "elf" section) with the RelaxPackedFunc ABI
  /// (runtime/c_api.h), and appends the other sections the loader needs to `sections`
  /// (cpu: "target", the triple and CPU features the code uses). Errors: relax::Error naming
  /// the PrimFunc for unsupported TIR, and LLVM/MLIR/linker failures with their messages.
  virtual std::string BuildKernels(const IRModule& mod, const Target& t,
                                   const CodegenOptions& options,
                                   std::vector<BackendSection>* sections) const = 0;
};

/// Adds `b` to the registry; Error if its kind is already registered.
void RegisterBackend(std::shared_ptr<const Backend> b);
/// The backend of `kind`; Error listing the registered kinds when there is none.
const Backend& GetBackend(const std::string& kind);
/// The backend of `kind`, or null.
const Backend* FindBackend(const std::string& kind);
/// Registered kinds, sorted.
std::vector<std::string> BackendKinds();

}  // namespace relax

#endif  // RELAX_TARGET_BACKEND_H_
