// Artifact::StatsText: `relaxc compile --stats` (kernels, schedule rules, device kernels and
// placement, VM and params sizes, ops imported, the memory plan as formulas in the symbolic
// dims and their values at the --bound maxima and at given sizes).
#include <algorithm>
#include <iomanip>
#include <optional>
#include <sstream>

#include "relax/driver/compile.h"

namespace relax::driver {

namespace {

// "memory at NAME=V,...: liveness lower bound L bytes, planned peak P bytes (Rx)": the summary
// evaluated at `values` (the lower bound as the max of every point's live bytes, exactly).
void MemoryAt(std::ostream& os, const MemorySummary& m,
              const std::map<std::string, int64_t>& values) {
  std::string where;
  for (const auto& [name, v] : values)
    where += (where.empty() ? "" : ",") + name + "=" + std::to_string(v);
  int64_t lower = 0;
  bool known = true;
  for (const PrimExpr& e : m.live_at) {
    std::optional<int64_t> v = EvaluateAt(e, values);
    known = known && v.has_value();
    if (v) lower = std::max(lower, *v);
  }
  std::optional<int64_t> peak = EvaluateAt(m.planned_peak, values);
  const std::string unknown = "? (a dim has no value)";
  os << "memory at " << where << ": liveness lower bound "
     << (known ? std::to_string(lower) : unknown) << " bytes, planned peak "
     << (peak ? std::to_string(*peak) : unknown) << " bytes";
  if (known && peak && lower > 0)
    os << " (" << std::fixed << std::setprecision(3)
       << static_cast<double>(*peak) / static_cast<double>(lower) << "x)";
  os << "\n";
}

}  // namespace

std::string Artifact::StatsText(const std::map<std::string, int64_t>& at) const {
  std::ostringstream os;
  const BuildStats& st = stats;
  os << "kernels: " << st.num_prim_funcs << " PrimFuncs, " << st.kernel_bytes << " bytes of code\n";
  for (const auto& [rule, n] : st.schedule_rules)
    os << "schedule: " << rule << ": " << n << " PrimFuncs\n";
  if (tuned)
    os << "tuning: " << st.tuned_kernels << " PrimFuncs take a setting from the tuning database\n";
  if (!st.device_kernels.empty()) {
    size_t fallbacks = 0;
    for (const KernelReport& k : st.device_kernels) {
      fallbacks += k.fallback;
      os << "kernel: " << k.name << " rule=" << k.rule << " bytes=" << k.binary_bytes
         << " shared=" << k.shared_bytes;
      if (k.registers >= 0) os << " registers=" << k.registers;
      if (k.spill_bytes >= 0) os << " spill_bytes=" << k.spill_bytes;
      os << (k.fallback ? " fallback=1" : "") << "\n";
    }
    os << "device kernels: " << st.device_kernels.size() << ", fallbacks: " << fallbacks << "\n";
  }
  if (!st.placement.empty())
    os << "placement: tensors of device kernels on " << st.placement
       << "; device copies: " << st.copies_to_device << " to the device, " << st.copies_to_host
       << " to the host (inside the model; inputs and outputs cross once at the VM boundary)\n";
  os << "vm: " << st.num_instructions << " instructions\nparams: " << st.params_bytes << " bytes\n";
  const MemorySummary& m = st.memory;
  const frontend::OnnxImportStats& imp = import_stats;
  if (!text_ir)
    os << "ops imported: " << imp.nodes - imp.constant_nodes << " (" << imp.nodes << " nodes, "
       << imp.constant_nodes << " Constant)\n";
  if (imp.initializers_frozen)
    os << "initializer inputs: " << imp.initializer_inputs
       << " frozen into constants (--freeze-initializers)\n";
  else if (imp.initializer_inputs > 0)
    os << "initializer inputs: " << imp.initializer_inputs << " optional inputs ("
       << imp.initializer_input_bytes
       << " bytes of defaults; --freeze-initializers makes them constants)\n";
  os << "kernel calls per inference: " << m.kernel_calls
     << "\ndistinct kernels: " << st.num_prim_funcs
     << "\nmemory: planned static bytes: " << m.planned_static_bytes
     << "\nmemory: liveness lower bound: "
     << (m.lower_bound.defined()
             ? ToString(m.lower_bound)
             : std::string("(more than 32 incomparable terms; see memory at NAME=V)"))
     << "\nmemory: planned peak: " << ToString(m.planned_peak) << "\n";
  if (!bounds.empty()) {
    std::map<std::string, int64_t> hi;
    for (const auto& [name, b] : bounds) hi[name] = b.second;
    MemoryAt(os, m, hi);
  }
  if (!at.empty()) MemoryAt(os, m, at);
  return os.str();
}

}  // namespace relax::driver
