// The VM interpreter: callee resolution, register-machine execution and input checking.
#include "relax/vm/vm.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "relax/runtime/allocator.h"
#include "relax/runtime/device_api.h"
#include "relax/support/error.h"
#include "relax/vm/builtins.h"

namespace relax::runtime {

namespace {
constexpr int kMaxCallDepth = 512;
}  // namespace

const char* ValueTypeName(const Value& v) {
  switch (v.index()) {
    case 0:
      return "null";
    case 1:
      return "int";
    case 2:
      return "float";
    case 3:
      return "string";
    case 4:
      return "tensor";
    case 5:
      return "shape";
    case 6:
      return "tuple";
    case 7:
      return "shape_heap";
    case 8:
      return "storage";
  }
  return "?";
}

struct VirtualMachine::Callee {
  // kRelease: vm.builtin.release, which only clears its destination register (no call).
  enum Kind { kFunction, kBuiltin, kKernel, kRelease } kind = kFunction;
  std::string name;
  size_t func_index = 0;
  const BuiltinFn* builtin = nullptr;
  RelaxPackedFunc kernel = nullptr;
  // A GPU artifact's device work must be finished before this callee runs: it may touch tensor
  // data on the host (a builtin DataFreeBuiltin does not list, a kernel that is not a host part of
  // device kernels).
  bool sync_device = false;
};

namespace {

// Builtins that never read or write tensor data (shapes, allocation, views, registers), so
// device launches still queued may run on while they execute.
bool DataFreeBuiltin(const std::string& name) {
  static const std::set<std::string> kDataFreeBuiltins = {
      "vm.builtin.alloc_shape_heap", "vm.builtin.alloc_storage", "vm.builtin.alloc_tensor",
      "vm.builtin.check_dims_equal", "vm.builtin.check_tensor", "vm.builtin.eval_prim",
      "vm.builtin.make_shape", "vm.builtin.make_tuple", "vm.builtin.match_shape", "vm.builtin.move",
      "vm.builtin.release", "vm.builtin.reshape", "vm.builtin.store_shape",
      "vm.builtin.tuple_getitem",
      // The device API orders copies after the launches queued before them.
      "vm.builtin.to_device", "vm.builtin.to_host"};
  return kDataFreeBuiltins.count(name) != 0;
}

// The host PrimFuncs of a GPU artifact's device kernels (KernelSpec::host): their host code
// only allocates workspaces and launches. (Older artifacts name none: every kernel call waits.)
std::set<std::string> LaunchingPrimFuncs(const DeviceModule* dm) {
  std::set<std::string> out;
  if (!dm) return out;
  for (const KernelSpec& k : dm->table.kernels)
    if (!k.host.empty()) out.insert(k.host);
  return out;
}

}  // namespace

VirtualMachine::VirtualMachine(std::shared_ptr<LoadedArtifact> artifact)
    : artifact_(std::move(artifact)) {
  if (!artifact_) RELAX_THROW("VirtualMachine: null artifact");
  // Unified memory: always for artifacts from before placement (their launches would stage
  // host tensors otherwise); for placed ones where the device shares the host's memory.
  const Executable& exec = artifact_->exec();
  // The device a placed artifact's tensors live on: its kernels' device, else (an artifact
  // whose device work is all BYOC functions) the one its signature names; none when nothing
  // is on a device (it then runs as a host artifact).
  if (const DeviceModule* dm = artifact_->device_module()) {
    run_device_ = dm->dev;
    has_run_device_ = true;
  } else if (exec.placed) {
    for (const auto* sigs : {&exec.inputs, &exec.outputs})
      for (const TensorSig& s : *sigs)
        if (!s.device.empty() && !has_run_device_) {
          run_device_ = ParseDevice(s.device);
          has_run_device_ = true;
        }
  }
  if (has_run_device_)
    unified_ = GpuSwitchFromEnv(
        "RELAX_GPU_UNIFIED",
        !exec.placed || DeviceAPI::Get(run_device_)->UnifiedByDefault(run_device_));
  const auto& tensors = artifact_->constant_tensors();
  for (size_t i = 0; i < exec.constants.size(); ++i) {
    const Constant& c = exec.constants[i];
    switch (c.kind) {
      case Constant::kInt:
        constants_.emplace_back(c.int_value);
        break;
      case Constant::kFloat:
        constants_.emplace_back(c.float_value);
        break;
      case Constant::kString:
        constants_.emplace_back(c.str);
        break;
      case Constant::kShape:
        constants_.emplace_back(Shape{c.shape});
        break;
      case Constant::kTensor:
        if (i >= tensors.size() || !tensors[i].defined())
          RELAX_THROW("constant " << i << ": tensor constant was not materialized");
        constants_.emplace_back(tensors[i]);
        break;
    }
  }
  std::unordered_map<std::string, size_t> func_index;
  for (size_t i = 0; i < exec.functions.size(); ++i) func_index[exec.functions[i].name] = i;
  const DeviceModule* dm = artifact_->device_module();
  const std::set<std::string> launching = LaunchingPrimFuncs(dm);
  std::unordered_map<std::string, std::shared_ptr<Callee>> cache;
  callees_.resize(exec.functions.size());
  for (size_t fi = 0; fi < exec.functions.size(); ++fi) {
    const Function& f = exec.functions[fi];
    callees_[fi].resize(f.code.size());
    for (size_t pc = 0; pc < f.code.size(); ++pc) {
      const Instruction& in = f.code[pc];
      if (in.op != Instruction::kCall) continue;
      auto& slot = cache[in.func];
      if (!slot) {
        auto c = std::make_shared<Callee>();
        c->name = in.func;
        if (auto it = func_index.find(in.func); it != func_index.end()) {
          c->kind = Callee::kFunction;
          c->func_index = it->second;
        } else if (in.func == "vm.builtin.release") {
          c->kind = Callee::kRelease;
        } else if (const BuiltinFn* b = LookupBuiltin(in.func)) {
          c->kind = Callee::kBuiltin;
          c->builtin = b;
        } else {
          if (in.func.rfind("vm.builtin.", 0) == 0)
            RELAX_THROW("function '" << f.name << "' calls unknown builtin '" << in.func << "'");
          c->kind = Callee::kKernel;
          c->kernel = artifact_->GetKernel(in.func);
        }
        // A placed artifact's host code reads only host tensors, which no kernel writes, and
        // its copies order themselves on the device's queue: only BYOC functions (their
        // libraries run on queues of their own) wait for the launches before them.
        const bool placed = exec.placed;
        c->sync_device =
            dm &&
            (placed ? (c->kind == Callee::kKernel && artifact_->IsPluginFunction(in.func))
                    : ((c->kind == Callee::kBuiltin && !DataFreeBuiltin(in.func)) ||
                       (c->kind == Callee::kKernel &&
                        (!launching.count(in.func) || artifact_->IsPluginFunction(in.func)))));
        slot = c;
      }
      callees_[fi][pc] = slot;
    }
  }
  // Where the signature puts tensors must be where this artifact runs: the module's device type
  // for a placed GPU artifact, host memory for anything else.
  const auto check_sig = [&](const std::vector<TensorSig>& sigs, const char* kind) {
    for (const TensorSig& s : sigs) {
      if (s.device.empty()) continue;
      const DLDevice d = ParseDevice(s.device);
      if (!exec.placed || d.device_type != run_device_.device_type)
        RELAX_THROW("bad executable: "
                    << kind << " '" << s.name << "' is on '" << s.device
                    << "', but the artifact runs on "
                    << (has_run_device_ ? DeviceToString(run_device_) : std::string("cpu:0"))
                    << (has_run_device_ && !exec.placed ? " without device placement" : ""));
    }
  };
  check_sig(exec.inputs, "input");
  check_sig(exec.outputs, "output");
  if (!func_index.count(exec.entry))
    RELAX_THROW("entry function '" << exec.entry << "' is not defined");
}

Value VirtualMachine::CallCallee(const Callee& c, std::vector<Value>& args, int depth) {
  if (c.sync_device) artifact_->device_module()->Sync();
  switch (c.kind) {
    case Callee::kFunction:
      return Execute(c.func_index, std::move(args), depth + 1);
    case Callee::kBuiltin:
      return (*c.builtin)(args);
    case Callee::kRelease:
      if (!args.empty()) RELAX_THROW("vm.builtin.release takes no arguments, got " << args.size());
      return {};
    case Callee::kKernel:
      break;
  }
  // The packed arguments on the stack for the usual counts (no allocation per kernel call).
  constexpr size_t kStackArgs = 24;
  std::array<RelaxValue, kStackArgs> stack_packed;
  std::vector<RelaxValue> heap_packed;
  if (args.size() > kStackArgs) heap_packed.resize(args.size());
  RelaxValue* packed = args.size() > kStackArgs ? heap_packed.data() : stack_packed.data();
  for (size_t i = 0; i < args.size(); ++i) {
    RelaxValue& r = packed[i];
    r.pad_ = 0;
    Value& v = args[i];
    if (std::holds_alternative<std::monostate>(v)) {
      RELAX_THROW("kernel '" << c.name << "': argument " << i << " is null");
    } else if (auto* iv = std::get_if<int64_t>(&v)) {
      r.type_code = kRelaxInt;
      r.v_int64 = *iv;
    } else if (auto* fv = std::get_if<double>(&v)) {
      r.type_code = kRelaxFloat;
      r.v_float64 = *fv;
    } else if (auto* sv = std::get_if<std::string>(&v)) {
      r.type_code = kRelaxString;
      r.v_str = sv->c_str();
    } else if (auto* tv = std::get_if<NDArray>(&v)) {
      if (!tv->defined())
        RELAX_THROW("kernel '" << c.name << "': argument " << i << " is undefined");
      r.type_code = kRelaxTensor;
      r.v_handle = tv->dl();
    } else {
      // Kernels take tensors and scalars only; anything else (a shape, tuple, heap, storage,
      // e.g. from an edited executable) would be misread as a DLTensor.
      RELAX_THROW("kernel '" << c.name << "': argument " << i << " is a " << ValueTypeName(v)
                             << ", expected a tensor or a scalar");
    }
  }
  RelaxValue ret;
  ret.type_code = kRelaxNull;
  ret.pad_ = 0;
  ret.v_int64 = 0;
  RelaxSetLastError("");
  int32_t rc = c.kernel(packed, static_cast<int32_t>(args.size()), &ret);
  if (rc != 0) {
    std::string msg = RelaxGetLastError();
    RELAX_THROW("kernel '" << c.name << "' failed: "
                           << (msg.empty() ? "error code " + std::to_string(rc) : msg));
  }
  switch (ret.type_code) {
    case kRelaxNull:
      return {};
    case kRelaxInt:
      return ret.v_int64;
    case kRelaxFloat:
      return ret.v_float64;
    case kRelaxString:
      return std::string(ret.v_str ? ret.v_str : "");
    default:
      RELAX_THROW("kernel '" << c.name << "' returned a value of unsupported type code "
                             << ret.type_code);
  }
}

Value VirtualMachine::Execute(size_t fi, std::vector<Value> args, int depth) {
  const Function& f = artifact_->exec().functions[fi];
  if (depth > kMaxCallDepth)
    RELAX_THROW("VM call depth exceeds " << kMaxCallDepth << " in function '" << f.name << "'");
  if (args.size() != f.param_names.size())
    RELAX_THROW("function '" << f.name << "' takes " << f.param_names.size() << " arguments, got "
                             << args.size());
  std::vector<Value> regs(static_cast<size_t>(f.num_regs));
  for (size_t i = 0; i < args.size(); ++i) regs[i] = std::move(args[i]);
  const int64_t n = static_cast<int64_t>(f.code.size());
  int64_t pc = 0;
  // One argument vector for every call of this frame (cleared, not reallocated, per call).
  std::vector<Value> av;
  av.reserve(16);
  while (true) {
    if (pc < 0 || pc >= n)
      RELAX_THROW("function '" << f.name << "': control reached pc " << pc
                               << " outside the code (missing ret?)");
    if (max_instructions_ > 0 && ++executed_ > max_instructions_)
      RELAX_THROW("function '" << f.name << "': instruction limit " << max_instructions_
                               << " exceeded");
    const Instruction& in = f.code[pc];
    switch (in.op) {
      case Instruction::kCall: {
        const Callee& callee = *callees_[fi][pc];
        if (callee.kind == Callee::kRelease && in.args.empty() && !profiling_) {
          if (in.dst >= 0) regs[in.dst] = Value();
          ++pc;
          break;
        }
        av.clear();
        for (const Arg& a : in.args) {
          switch (a.kind) {
            case Arg::kReg:
              av.push_back(regs[a.value]);
              break;
            case Arg::kConst:
              av.push_back(constants_[a.value]);
              break;
            case Arg::kImm:
              av.emplace_back(a.value);
              break;
          }
        }
        Value r;
        if (profiling_) {
          auto t0 = std::chrono::steady_clock::now();
          r = CallCallee(callee, av, depth);
          // Device work is queued: wait for it, so the callee's time includes its kernels.
          if (const DeviceModule* dm = artifact_->device_module()) dm->Sync();
          auto& slot = profile_[in.func];
          slot.first +=
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                  .count();
          slot.second += 1;
        } else {
          r = CallCallee(callee, av, depth);
        }
        if (in.dst >= 0) regs[in.dst] = std::move(r);
        ++pc;
        break;
      }
      case Instruction::kRet:
        return regs[in.reg];
      case Instruction::kGoto:
        pc += in.offset;
        break;
      case Instruction::kIf: {
        const int64_t* c = std::get_if<int64_t>(&regs[in.cond]);
        if (!c)
          RELAX_THROW("function '" << f.name << "': if condition register " << in.cond
                                   << " holds a " << ValueTypeName(regs[in.cond])
                                   << ", expected int");
        pc += (*c == 0) ? in.offset : 1;
        break;
      }
    }
  }
}

std::string VirtualMachine::ProfileReport() const {
  if (profile_.empty()) return "";
  std::vector<std::pair<std::string, std::pair<double, int64_t>>> rows(profile_.begin(),
                                                                       profile_.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  double total = 0;
  for (const auto& r : rows) total += r.second.first;
  std::string out = "      total ms    calls   share  callee\n";
  char buf[512];
  for (const auto& [name, v] : rows) {
    snprintf(buf, sizeof(buf), "  %12.3f %8lld  %5.1f%%  %s\n", v.first,
             static_cast<long long>(v.second), total > 0 ? 100.0 * v.first / total : 0.0,
             name.c_str());
    out += buf;
  }
  snprintf(buf, sizeof(buf), "  %12.3f           total\n", total);
  out += buf;
  // The VM's own cost per inference: builtins (allocation, shape code, checks, tuples) and
  // the interpreter (argument marshalling, register moves, dispatch: the wall time minus every
  // callee's), beside the kernels'.
  if (profile_invocations_ > 0) {
    double kernels = 0, builtins = 0;
    int64_t kcalls = 0, bcalls = 0;
    for (const auto& [name, v] : rows) {
      if (name.rfind("vm.builtin.", 0) == 0) {
        builtins += v.first;
        bcalls += v.second;
      } else if (!IsVmFunction(name)) {
        kernels += v.first;
        kcalls += v.second;
      }
    }
    const double n = static_cast<double>(profile_invocations_);
    const double interp = std::max(0.0, profile_wall_ms_ - kernels - builtins);
    snprintf(buf, sizeof(buf),
             "per inference (%lld): %.4f ms wall = kernels %.4f ms (%.1f calls) + VM builtins "
             "%.4f ms (%.1f calls, %.3f us each) + interpreter %.4f ms\n",
             static_cast<long long>(profile_invocations_), profile_wall_ms_ / n, kernels / n,
             static_cast<double>(kcalls) / n, builtins / n, static_cast<double>(bcalls) / n,
             bcalls > 0 ? 1000.0 * builtins / static_cast<double>(bcalls) : 0.0, interp / n);
    out += buf;
  }
  return out;
}

bool VirtualMachine::IsVmFunction(const std::string& name) const {
  for (const auto& f : artifact_->exec().functions)
    if (f.name == name) return true;
  return false;
}

Value VirtualMachine::Invoke(const std::string& name, std::vector<Value> args) {
  const auto& fs = artifact_->exec().functions;
  for (size_t i = 0; i < fs.size(); ++i)
    if (fs[i].name == name) {
      executed_ = 0;
      const DeviceModule* dm = artifact_->device_module();
      if (!dm && profiling_) {
        // The whole call's wall time, so the report can tell the VM's own cost apart.
        auto t0 = std::chrono::steady_clock::now();
        Value r = Execute(i, std::move(args), 0);
        profile_wall_ms_ +=
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        ++profile_invocations_;
        return r;
      }
      if (!dm) return Execute(i, std::move(args), 0);
      // The caller reads the results (and may reuse the memory) once this returns.
      Value r;
      try {
        r = Execute(i, std::move(args), 0);
      } catch (...) {
        try {
          dm->Sync();
        } catch (...) {
          // The first error is the one to report.
        }
        throw;
      }
      dm->Sync();
      return r;
    }
  RELAX_THROW("no VM function named '" << name << "'");
}

void VirtualMachine::CheckInputs(const std::vector<NDArray>& inputs) const {
  CheckInputValues(std::vector<Value>(inputs.begin(), inputs.end()));
}

void VirtualMachine::CheckInputValues(const std::vector<Value>& inputs) const {
  const auto& sig = artifact_->exec().inputs;
  if (inputs.size() != sig.size()) {
    std::string names;
    for (size_t i = 0; i < sig.size(); ++i)
      names += (i ? ", " : "") + sig[i].name + (sig[i].default_constant >= 0 ? " (optional)" : "");
    RELAX_THROW("expected " << sig.size() << (sig.size() == 1 ? " input" : " inputs") << " ("
                            << names << "), got " << inputs.size());
  }
  std::map<std::string, std::pair<int64_t, std::string>> bound;  // sym -> (value, input name)
  for (size_t i = 0; i < sig.size(); ++i) {
    const TensorSig& s = sig[i];
    std::string what = "input '" + s.name + "'";
    if (s.sequence) {
      const Tuple* seq = std::get_if<Tuple>(&inputs[i]);
      if (!seq || !*seq)
        RELAX_THROW(what << ": expected a sequence of " << s.dtype << " tensors, got a "
                         << ValueTypeName(inputs[i]));
      for (size_t k = 0; k < (*seq)->fields.size(); ++k) {
        const NDArray* e = std::get_if<NDArray>(&(*seq)->fields[k]);
        if (!e || !e->defined() || e->device().device_type != kDLCPU)
          RELAX_THROW(what << ": sequence element " << k << " is not a cpu tensor");
        if (DTypeToString(e->dtype()) != s.dtype)
          RELAX_THROW(what << ": sequence element " << k << " has dtype "
                           << DTypeToString(e->dtype()) << ", expected " << s.dtype);
      }
      continue;
    }
    const NDArray* tp = std::get_if<NDArray>(&inputs[i]);
    if (!tp) RELAX_THROW(what << ": expected a tensor, got a " << ValueTypeName(inputs[i]));
    const NDArray& t = *tp;
    if (!t.defined()) RELAX_THROW(what << ": undefined tensor");
    const DLDevice td = t.device();
    const bool placed = has_run_device_ && artifact_->exec().placed;
    const bool on_device = placed && td.device_type == run_device_.device_type &&
                           td.device_id == run_device_.device_id;
    if (td.device_type != kDLCPU && !on_device)
      RELAX_THROW(what << ": expected a tensor in host memory"
                       << (placed ? " or on " + DeviceToString(run_device_) : "") << ", got one on "
                       << DeviceToString(td));
    // Device memory labelled as host memory would fault when the host reads it (Vulkan's
    // device addresses are inaccessible host ranges).
    if (td.device_type == kDLCPU) CheckHostLabel(t.data(), t.nbytes(), what);
    if (on_device && t.nbytes() > 0 && !DeviceAPI::Get(td)->HoldsData(td, t.data(), t.nbytes()))
      RELAX_THROW(what << ": its data (" << t.data() << ", " << t.nbytes()
                       << " bytes) is not memory of " << DeviceToString(td)
                       << " (allocate it with RelaxDeviceAlloc)");
    std::string dt = DTypeToString(t.dtype());
    if (dt != s.dtype) RELAX_THROW(what << ": expected dtype " << s.dtype << ", got " << dt);
    if (t.ndim() != static_cast<int64_t>(s.dims.size()))
      RELAX_THROW(what << ": expected " << s.dims.size() << " dims, got " << t.ndim());
    for (size_t d = 0; d < s.dims.size(); ++d) {
      int64_t got = t.shape()[d];
      const DimSig& ds = s.dims[d];
      if (ds.sym.empty()) {
        if (got != ds.value)
          RELAX_THROW(what << ": dim " << d << " must be " << ds.value << ", got " << got);
        continue;
      }
      auto it = bound.find(ds.sym);
      if (it == bound.end()) {
        bound[ds.sym] = {got, s.name};
      } else if (it->second.first != got) {
        RELAX_THROW(what << ": dim " << d << " (" << ds.sym << ") is " << got << " but '"
                         << it->second.second << "' gave " << ds.sym << " = " << it->second.first);
      }
    }
  }
}

std::vector<NDArray> VirtualMachine::Run(const std::vector<NDArray>& inputs) {
  std::vector<NDArray> outs;
  for (const Value& v : RunValues(std::vector<Value>(inputs.begin(), inputs.end()))) {
    const NDArray* t = std::get_if<NDArray>(&v);
    if (!t)
      RELAX_THROW("output " << outs.size() << " is a sequence; this interface returns tensors"
                            << " only (use RunValues)");
    outs.push_back(*t);
  }
  return outs;
}

std::vector<Value> VirtualMachine::WithDefaults(const std::vector<Value>& given) const {
  const auto& sig = artifact_->exec().inputs;
  std::vector<Value> inputs(given);
  if (inputs.size() != sig.size()) return inputs;  // CheckInputValues reports the count
  for (size_t i = 0; i < sig.size(); ++i) {
    const NDArray* t = std::get_if<NDArray>(&inputs[i]);
    if (!std::holds_alternative<std::monostate>(inputs[i]) && (!t || t->defined())) continue;
    if (sig[i].default_constant < 0)
      RELAX_THROW("input '" << sig[i].name
                            << "' is required: it has no default (only inputs with a default, "
                               "ONNX initializers that are also graph inputs, may be omitted)");
    inputs[i] = constants_[sig[i].default_constant];
  }
  return inputs;
}

std::vector<Value> VirtualMachine::RunValues(const std::vector<Value>& given) {
  const std::vector<Value> inputs = WithDefaults(given);
  CheckInputValues(inputs);
  const Executable& exec = artifact_->exec();
  const DeviceModule* dm = artifact_->device_module();
  if (has_run_device_ && exec.placed) {
    // Tensors live where the compiler placed them: each input goes where the signature takes
    // it (one copy when the caller's tensor is elsewhere), outputs come back to the host
    // unless the caller keeps them on the device.
    DeviceMemoryScope scope(run_device_, unified_);
    std::vector<Value> args(inputs);
    for (size_t i = 0; i < args.size() && i < exec.inputs.size(); ++i) {
      const NDArray* t = std::get_if<NDArray>(&args[i]);
      if (!t || !t->defined()) continue;
      const std::string& where = exec.inputs[i].device;
      args[i] = CopyTensorTo(
          *t, where.empty() ? DLDevice{kDLCPU, 0} : DeviceMemoryScope::Resolve(ParseDevice(where)));
    }
    std::vector<Value> outs = SplitOutputs(Invoke(exec.entry, std::move(args)));
    if (!outputs_on_device_)
      for (Value& v : outs) v = ValueToHost(v);
    return outs;
  }
  std::optional<UnifiedMemoryScope> scope;
  Value result;
  if (unified_) {
    scope.emplace(dm->dev);
    // One copy of each tensor input into unified memory, so no launch stages it.
    std::vector<Value> args(inputs);
    for (Value& v : args) {
      const NDArray* t = std::get_if<NDArray>(&v);
      if (!t || !t->defined()) continue;
      NDArray u = NDArray::Empty(t->shape(), t->dtype());
      if (t->nbytes() > 0) std::memcpy(u.data(), t->data(), t->nbytes());
      v = u;
    }
    result = Invoke(exec.entry, std::move(args));
  } else {
    result = Invoke(exec.entry, inputs);
  }
  // Outputs in host memory: an edited or foreign executable may still return device tensors.
  std::vector<Value> outs = SplitOutputs(result);
  for (Value& v : outs) v = ValueToHost(v);
  return outs;
}

std::vector<Value> VirtualMachine::SplitOutputs(const Value& result) const {
  const Executable& exec = artifact_->exec();
  // A single sequence output is itself a tuple: the signature tells it from a result tuple.
  bool single_seq = exec.outputs.size() == 1 && exec.outputs[0].sequence;
  std::vector<Value> outs;
  if (std::holds_alternative<NDArray>(result) || single_seq) {
    outs.push_back(result);
  } else if (auto* tup = std::get_if<Tuple>(&result); tup && *tup) {
    outs = (*tup)->fields;
  } else {
    RELAX_THROW("entry function '" << exec.entry << "' returned a " << ValueTypeName(result)
                                   << ", expected a tensor or a tuple of tensors");
  }
  if (!exec.outputs.empty() && outs.size() != exec.outputs.size())
    RELAX_THROW("entry function '" << exec.entry << "' returned " << outs.size()
                                   << " outputs, the signature declares " << exec.outputs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    bool seq = i < exec.outputs.size() && exec.outputs[i].sequence;
    bool ok = false;
    if (auto* t = std::get_if<NDArray>(&outs[i])) ok = !seq && t->defined();
    if (auto* t = std::get_if<Tuple>(&outs[i]); t && *t && seq) {
      ok = true;
      for (const Value& e : (*t)->fields) ok &= std::holds_alternative<NDArray>(e);
    }
    if (!ok)
      RELAX_THROW("entry function '" << exec.entry << "' returned a " << ValueTypeName(outs[i])
                                     << " as output " << i << ", expected a "
                                     << (seq ? "sequence of tensors" : "defined tensor"));
  }
  return outs;
}

Value VirtualMachine::ValueToHost(const Value& v) {
  if (const NDArray* t = std::get_if<NDArray>(&v)) return CopyTensorTo(*t, DLDevice{kDLCPU, 0});
  if (const Tuple* t = std::get_if<Tuple>(&v); t && *t) {
    auto out = std::make_shared<TupleObj>();
    for (const Value& f : (*t)->fields) out->fields.push_back(ValueToHost(f));
    return Tuple(std::move(out));
  }
  return v;
}

}  // namespace relax::runtime
