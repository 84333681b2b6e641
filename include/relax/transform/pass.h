// Pass infrastructure: a pass is a named IRModule -> IRModule function,
// registered once; pipelines run lists of them with instrumentation
// (--print-ir-after-all, --print-ir-after=NAME, --time-passes, --verify-each).
#ifndef RELAX_TRANSFORM_PASS_H_
#define RELAX_TRANSFORM_PASS_H_

#include <functional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "relax/ir/module.h"
#include "relax/transform/pass_context.h"

namespace relax {

struct Pass {
  std::string name;         // kebab-case, e.g. "legalize"
  std::string description;  // one line, shown by `relax-opt --help`
  /// Rewrites the module in place; reads the compilation's PassContext.
  std::function<void(IRModule*, const PassContext&)> run;
  /// The PassContext::options keys the pass reads ("<name>.<option>"), for --pass-option.
  std::vector<std::string> option_keys = {};
  /// Throws relax::Error naming the key when one of its options has a bad value (null: none).
  std::function<void(const PassContext&)> check_options = nullptr;
};

/// Registers a pass (called once per pass from lib/transform/passes.cc).
void RegisterPass(Pass p);
/// The pass named `name`, or nullptr.
const Pass* FindPass(const std::string& name);
/// All registered passes, sorted by name.
std::vector<const Pass*> ListPasses();
/// Checks `ctx.options` (from --pass-option) before any pass runs: every key must be one a
/// registered pass declares (option_keys), and each pass's check_options must accept its values,
/// whether or not the pass runs. Throws relax::Error naming the key ("unknown pass option
/// 'fold-constants.max-elemnts' (known: ...)").
void CheckPassOptions(const PassContext& ctx);

struct PassInstrumentOptions {
  bool print_after_all = false;
  std::set<std::string> print_after;  // pass/stage names
  bool time_passes = false;
  bool verify_each = true;
  /// If set: called after each pass with its name and the module it produced (e.g. to draw the
  /// partitioned graph after fuse-ops).
  std::function<void(const std::string&, const IRModule&)> after_pass = nullptr;
  /// If set: called with a stage's name as it starts: each pass, and the stages that are not
  /// passes that PassRunner::Begin reports ("codegen", "vm-codegen"); for a progress display.
  std::function<void(const std::string&)> on_stage = nullptr;
  std::ostream* out = nullptr;  // where IR dumps and timings go (stderr if null)
};

/// Runs passes by name with instrumentation. Unknown names -> relax::Error
/// listing the registered passes. With verify_each, the well-formedness
/// checker runs after each pass and its failure names the pass.
class PassRunner {
 public:
  explicit PassRunner(PassInstrumentOptions opts, PassContext ctx = {})
      : opts_(std::move(opts)), ctx_(std::move(ctx)) {}
  const PassContext& context() const { return ctx_; }
  void Run(IRModule* mod, const std::vector<std::string>& names);
  /// Reports a stage that is not a registered pass (e.g. "import", "codegen-mlir"):
  /// prints `text` when the options ask for it.
  void Stage(const std::string& name, const std::string& text);
  /// Reports that a stage that is not a registered pass starts (PassInstrumentOptions::on_stage).
  void Begin(const std::string& name) const {
    if (opts_.on_stage) opts_.on_stage(name);
  }
  bool WantsDump(const std::string& name) const {
    return opts_.print_after_all || opts_.print_after.count(name);
  }
  /// Prints the timing report (if time_passes).
  void Finish();

 private:
  PassInstrumentOptions opts_;
  PassContext ctx_;
  std::vector<std::pair<std::string, double>> timings_;
};

/// Well-formedness of a module: every var defined before use, dataflow vars
/// not used outside their block, bindings carry StructInfo, symbolic vars used
/// in a function are bound by its parameters or a match_cast, PrimFunc buffers
/// and loop vars defined before use. Throws relax::Error naming the function,
/// binding and problem.
void VerifyWellFormed(const IRModule& mod);

}  // namespace relax

#endif  // RELAX_TRANSFORM_PASS_H_
