// The embedding C API (module_api.h) over ArtifactRunner: DLTensor in, DLManagedTensor out,
// errors as return codes + RelaxSetLastError.
#include "relax/runtime/module_api.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "relax/runtime/allocator.h"
#include "relax/runtime/device_api.h"
#include "relax/support/error.h"
#include "relax/vm/runner.h"

using relax::runtime::ArtifactRunner;
using relax::runtime::NDArray;
using relax::runtime::TensorSig;

namespace {

// One input or output description with the storage its RelaxTensorInfo points into.
struct TensorInfoStorage {
  DLDataType dtype{};
  std::vector<int64_t> shape;
  std::vector<std::string> dim_names;
  std::vector<const char*> dim_name_ptrs;

  explicit TensorInfoStorage(const TensorSig& s) {
    dtype = relax::runtime::ParseDType(s.dtype);
    for (const auto& d : s.dims) {
      shape.push_back(d.sym.empty() ? d.value : -1);
      dim_names.push_back(d.sym);
    }
    for (const auto& n : dim_names) dim_name_ptrs.push_back(n.empty() ? nullptr : n.c_str());
  }
};

// A runtime-allocated output handed to the caller: the DLManagedTensor keeps the NDArray alive.
struct ManagedOutput {
  NDArray array;
  DLManagedTensor managed{};
};

void DeleteManagedOutput(DLManagedTensor* t) {
  if (t) delete static_cast<ManagedOutput*>(t->manager_ctx);
}

// `a` as a compact DLManagedTensor owning a reference to it (freed by its deleter).
std::unique_ptr<ManagedOutput> Managed(NDArray a) {
  auto m = std::make_unique<ManagedOutput>();
  m->array = std::move(a);
  m->managed.dl_tensor = *m->array.dl();
  m->managed.dl_tensor.data = m->array.data();
  m->managed.dl_tensor.strides = nullptr;
  m->managed.dl_tensor.byte_offset = 0;
  m->managed.manager_ctx = m.get();
  m->managed.deleter = DeleteManagedOutput;
  return m;
}

// Runs `f`, turning any exception into RelaxSetLastError + a non-zero return.
template <typename F>
int32_t Guard(F&& f) {
  try {
    f();
    return 0;
  } catch (const std::exception& e) {
    RelaxSetLastError(e.what());
  } catch (...) {
    RelaxSetLastError("unknown error");
  }
  return 1;
}

// Wraps caller-owned input `t` (borrowed for the call) as an NDArray. The rank is checked against
// the signature `sig` before the shape array is read (a wrong ndim must not read past the
// caller's array); the other signature checks (device, dtype, dims) are left to
// VirtualMachine::Run, which names the input and dim.
NDArray WrapInput(const DLTensor* t, const TensorSig& sig) {
  std::string what = "input '" + sig.name + "'";
  if (!t)
    RELAX_THROW(what << ": null DLTensor (only an input with a default may be given as NULL, "
                        "and this one has none)");
  if (t->ndim < 0) RELAX_THROW(what << ": negative ndim " << t->ndim);
  if (!sig.sequence && t->ndim != static_cast<int32_t>(sig.dims.size()))
    RELAX_THROW(what << ": expected " << sig.dims.size() << " dims, got " << t->ndim);
  if (t->ndim > 0 && !t->shape) RELAX_THROW(what << ": null shape");
  std::vector<int64_t> shape(t->shape, t->shape + t->ndim);
  for (int32_t d = 0; d < t->ndim; ++d)
    if (shape[d] < 0) RELAX_THROW(what << ": dim " << d << " is negative (" << shape[d] << ")");
  DLDataType dtype = t->dtype;
  if (dtype.code == 6 /* kDLBool (DLPack 1.x) */ && dtype.bits == 8 && dtype.lanes == 1)
    dtype = DLDataType{kDLUInt, 1, 1};
  if (t->strides) {
    int64_t expect = 1;
    for (int32_t d = t->ndim - 1; d >= 0; --d) {
      if (shape[d] != 1 && t->strides[d] != expect)
        RELAX_THROW(what << ": strides must be compact row-major (dim " << d << " has stride "
                         << t->strides[d] << ", expected " << expect << ")");
      expect *= shape[d];
    }
  }
  char* data = static_cast<char*>(t->data);
  if (data) data += t->byte_offset;
  int64_t numel = relax::runtime::ShapeNumel(shape, what);
  if (!data && numel != 0) RELAX_THROW(what << ": null data");
  return NDArray::FromExternal(data, std::move(shape), dtype, nullptr, t->device);
}

// True when `out` shares bytes with one of `arrays`. An entry function can return an input (or a
// view of it) or a weight of the read-only params section; such an output is copied, so that
// every output is writable and outlives the caller's buffers and the module.
bool Overlaps(const NDArray& out, const std::vector<NDArray>& arrays) {
  auto lo = reinterpret_cast<uintptr_t>(out.data());
  uintptr_t hi = lo + out.nbytes();
  for (const NDArray& in : arrays) {
    if (!in.defined()) continue;  // an omitted input (its default is in the params section)
    auto ilo = reinterpret_cast<uintptr_t>(in.data());
    uintptr_t ihi = ilo + in.nbytes();
    if (lo < ihi && ilo < hi) return true;
  }
  return false;
}

NDArray CopyOf(const NDArray& a) {
  const DLDevice dev = a.device();
  if (dev.device_type != kDLCPU) {
    // A device output that aliases a device input: a copy within the device.
    relax::runtime::Storage st = relax::runtime::Allocator::Get(dev)->Alloc(a.nbytes(), 256);
    NDArray c = relax::runtime::TensorFromStorage(st, 0, a.shape(), a.dtype());
    if (a.nbytes())
      relax::runtime::DeviceAPI::Get(dev)->CopyDataFromTo(a.data(), c.data(), a.nbytes(), dev, dev,
                                                          nullptr);
    return c;
  }
  NDArray c = NDArray::Empty(a.shape(), a.dtype(), a.device());
  if (a.nbytes()) std::memcpy(c.data(), a.data(), a.nbytes());
  return c;
}

}  // namespace

struct RelaxModule {
  RelaxModule(const std::string& path, int device_id) : runner(path, device_id) {
    for (const auto& s : runner.inputs()) inputs.emplace_back(s);
    for (const auto& s : runner.outputs()) outputs.emplace_back(s);
  }
  ArtifactRunner runner;
  std::vector<TensorInfoStorage> inputs, outputs;
  std::mutex mu;  // serializes Run (the VM holds per-run state)
};

namespace {

int32_t GetInfo(const RelaxModule* mod, int32_t index, RelaxTensorInfo* out, bool input) {
  return Guard([&] {
    const char* kind = input ? "input" : "output";
    if (!mod || !out)
      RELAX_THROW("RelaxModuleGet" << (input ? "Input" : "Output") << "Info: null "
                                   << (mod ? "out" : "module"));
    const auto& sigs = input ? mod->runner.inputs() : mod->runner.outputs();
    const auto& infos = input ? mod->inputs : mod->outputs;
    if (index < 0 || static_cast<size_t>(index) >= infos.size())
      RELAX_THROW(kind << " index " << index << " out of range [0, " << infos.size() << ")");
    const TensorInfoStorage& st = infos[index];
    out->name = sigs[index].name.c_str();
    out->dtype_name = sigs[index].dtype.c_str();
    out->dtype = st.dtype;
    out->ndim = static_cast<int32_t>(st.shape.size());
    out->shape = st.shape.data();
    out->dim_names = st.dim_name_ptrs.data();
  });
}

}  // namespace

extern "C" int32_t RelaxModuleLoadOnDevice(const char* path, int32_t device_id, RelaxModule** out) {
  if (out) *out = nullptr;
  return Guard([&] {
    if (!path) RELAX_THROW("RelaxModuleLoad: null path");
    if (!out) RELAX_THROW("RelaxModuleLoad: null out");
    if (device_id < 0) RELAX_THROW("RelaxModuleLoad: negative device id " << device_id);
    *out = new RelaxModule(path, device_id);
  });
}

extern "C" int32_t RelaxModuleLoad(const char* path, RelaxModule** out) {
  return RelaxModuleLoadOnDevice(path, 0, out);
}

extern "C" void RelaxModuleFree(RelaxModule* mod) { delete mod; }

extern "C" int32_t RelaxModuleNumInputs(const RelaxModule* mod) {
  return mod ? static_cast<int32_t>(mod->inputs.size()) : 0;
}

extern "C" int32_t RelaxModuleNumOutputs(const RelaxModule* mod) {
  return mod ? static_cast<int32_t>(mod->outputs.size()) : 0;
}

extern "C" int32_t RelaxModuleGetInputInfo(const RelaxModule* mod, int32_t index,
                                           RelaxTensorInfo* out) {
  return GetInfo(mod, index, out, true);
}

extern "C" int32_t RelaxModuleGetOutputInfo(const RelaxModule* mod, int32_t index,
                                            RelaxTensorInfo* out) {
  return GetInfo(mod, index, out, false);
}

extern "C" int32_t RelaxModuleInputHasDefault(const RelaxModule* mod, int32_t index, int32_t* out) {
  return Guard([&] {
    if (!mod || !out) RELAX_THROW("RelaxModuleInputHasDefault: null " << (mod ? "out" : "module"));
    const auto& sigs = mod->runner.inputs();
    if (index < 0 || static_cast<size_t>(index) >= sigs.size())
      RELAX_THROW("input index " << index << " out of range [0, " << sigs.size() << ")");
    *out = sigs[index].default_constant >= 0 ? 1 : 0;
  });
}

extern "C" int32_t RelaxModuleGetInputDefault(const RelaxModule* mod, int32_t index,
                                              DLManagedTensor** out) {
  if (out) *out = nullptr;
  return Guard([&] {
    if (!mod || !out) RELAX_THROW("RelaxModuleGetInputDefault: null " << (mod ? "out" : "module"));
    const auto& sigs = mod->runner.inputs();
    if (index < 0 || static_cast<size_t>(index) >= sigs.size())
      RELAX_THROW("input index " << index << " out of range [0, " << sigs.size() << ")");
    const int64_t k = sigs[index].default_constant;
    if (k < 0) RELAX_THROW("input '" << sigs[index].name << "' has no default");
    // A copy the caller owns: the constant itself views the module's read-only params.
    *out = &Managed(CopyOf(mod->runner.artifact().constant_tensors().at(static_cast<size_t>(k))))
                .release()
                ->managed;
  });
}

extern "C" int32_t RelaxModuleRun(RelaxModule* mod, const DLTensor* const* inputs,
                                  int32_t num_inputs, DLManagedTensor** outputs,
                                  int32_t num_outputs) {
  return Guard([&] {
    if (!mod) RELAX_THROW("RelaxModuleRun: null module");
    const auto& sig = mod->runner.inputs();
    if (num_inputs < 0 || (num_inputs > 0 && !inputs))
      RELAX_THROW("RelaxModuleRun: bad input array (" << num_inputs << " inputs)");
    if (num_outputs > 0 && !outputs) RELAX_THROW("RelaxModuleRun: null output array");
    if (num_outputs != static_cast<int32_t>(mod->outputs.size()))
      RELAX_THROW("RelaxModuleRun: the module has " << mod->outputs.size()
                                                    << " outputs, the caller gave " << num_outputs
                                                    << " slots");
    // A wrong count is reported by the signature check ("expected 1 input (x), got 2"). A NULL
    // input with a default stays undefined: the VM takes the default.
    std::vector<NDArray> in(num_inputs);
    if (static_cast<size_t>(num_inputs) == sig.size())
      for (int32_t i = 0; i < num_inputs; ++i)
        if (inputs[i] || sig[i].default_constant < 0) in[i] = WrapInput(inputs[i], sig[i]);
    std::vector<NDArray> outs;
    {
      std::lock_guard<std::mutex> lock(mod->mu);
      outs = mod->runner.Run(in);
    }
    if (outs.size() != static_cast<size_t>(num_outputs))
      RELAX_THROW("the entry function returned " << outs.size() << " outputs, expected "
                                                 << num_outputs);
    std::vector<std::unique_ptr<ManagedOutput>> made;
    const uint8_t* params = mod->runner.artifact().params_data();
    NDArray params_view;  // the read-only params section, to detect outputs that alias it
    if (params)
      params_view =
          NDArray::FromExternal(const_cast<uint8_t*>(params),
                                {static_cast<int64_t>(mod->runner.artifact().params_size())},
                                DLDataType{kDLUInt, 8, 1}, nullptr);
    for (NDArray& o : outs) {
      bool alias = Overlaps(o, in) || (params_view.defined() && Overlaps(o, {params_view}));
      made.push_back(Managed(alias ? CopyOf(o) : o));
    }
    for (int32_t i = 0; i < num_outputs; ++i) outputs[i] = &made[i].release()->managed;
  });
}

namespace {

// The device the module's tensors live on (the VM's answer: {kDLCPU, 0} for a CPU artifact).
DLDevice ModuleDevice(const RelaxModule* mod) { return mod->runner.vm().run_device(); }

// The bytes of a compact tensor on the host or on `dev` (checked).
size_t CheckedBytes(const DLTensor* t, DLDevice dev, const char* what) {
  if (!t) RELAX_THROW("RelaxDeviceCopy: null " << what);
  const bool here = t->device.device_type == kDLCPU || (t->device.device_type == dev.device_type &&
                                                        t->device.device_id == dev.device_id);
  if (!here)
    RELAX_THROW("RelaxDeviceCopy: the " << what << " is on "
                                        << relax::runtime::DeviceToString(t->device)
                                        << ", not in host memory or on the module's "
                                        << relax::runtime::DeviceToString(dev));
  if (t->ndim < 0 || (t->ndim > 0 && !t->shape))
    RELAX_THROW("RelaxDeviceCopy: the " << what << " has a bad shape");
  std::vector<int64_t> shape(t->shape, t->shape + t->ndim);
  int64_t expect = 1;
  for (int32_t d = t->ndim - 1; d >= 0; --d) {
    if (t->strides && shape[d] != 1 && t->strides[d] != expect)
      RELAX_THROW("RelaxDeviceCopy: the " << what << " is not compact");
    expect *= std::max<int64_t>(shape[d], 1);
  }
  const int64_t numel = relax::runtime::ShapeNumel(shape, std::string("RelaxDeviceCopy ") + what);
  size_t bytes = 0;
  if (static_cast<uint64_t>(numel) > std::numeric_limits<size_t>::max() ||
      __builtin_mul_overflow(static_cast<size_t>(numel),
                             static_cast<size_t>((t->dtype.bits * t->dtype.lanes + 7) / 8), &bytes))
    RELAX_THROW("RelaxDeviceCopy: the " << what << " is too large");
  if (bytes > 0 && !t->data) RELAX_THROW("RelaxDeviceCopy: the " << what << " has no data");
  if (t->device.device_type == kDLCPU)
    relax::runtime::CheckHostLabel(static_cast<const char*>(t->data) + t->byte_offset, bytes,
                                   std::string("RelaxDeviceCopy: the ") + what);
  return bytes;
}

}  // namespace

extern "C" int32_t RelaxModuleDevice(const RelaxModule* mod, DLDevice* out) {
  return Guard([&] {
    if (!mod || !out) RELAX_THROW("RelaxModuleDevice: null " << (mod ? "out" : "module"));
    *out = ModuleDevice(mod);
  });
}

namespace {
// The blocks RelaxDeviceAlloc handed out (any module), by address, with their device: a free
// must name one of them exactly, on the device it came from.
std::mutex& DeviceAllocsMutex() {
  static std::mutex m;
  return m;
}
std::map<void*, DLDevice>& DeviceAllocs() {
  static auto* m = new std::map<void*, DLDevice>;  // never destroyed (blocks outlive statics)
  return *m;
}
}  // namespace

extern "C" int32_t RelaxDeviceAlloc(const RelaxModule* mod, size_t nbytes, void** out) {
  if (out) *out = nullptr;
  return Guard([&] {
    if (!mod || !out) RELAX_THROW("RelaxDeviceAlloc: null " << (mod ? "out" : "module"));
    const DLDevice dev = ModuleDevice(mod);
    void* p = relax::runtime::DeviceAPI::Get(dev)->AllocData(dev, nbytes, 256);
    std::lock_guard<std::mutex> lock(DeviceAllocsMutex());
    DeviceAllocs()[p] = dev;
    *out = p;
  });
}

extern "C" int32_t RelaxDeviceFree(const RelaxModule* mod, void* data) {
  return Guard([&] {
    if (!mod) RELAX_THROW("RelaxDeviceFree: null module");
    if (!data) return;
    const DLDevice dev = ModuleDevice(mod);
    {
      std::lock_guard<std::mutex> lock(DeviceAllocsMutex());
      auto it = DeviceAllocs().find(data);
      if (it == DeviceAllocs().end() || it->second.device_type != dev.device_type ||
          it->second.device_id != dev.device_id)
        RELAX_THROW("RelaxDeviceFree: " << data << " is not a block RelaxDeviceAlloc made on "
                                        << relax::runtime::DeviceToString(dev)
                                        << " (or it was freed already)");
      DeviceAllocs().erase(it);
    }
    relax::runtime::DeviceAPI::Get(dev)->FreeData(dev, data);
  });
}

extern "C" int32_t RelaxDeviceCopy(const RelaxModule* mod, const DLTensor* src, DLTensor* dst) {
  return Guard([&] {
    if (!mod) RELAX_THROW("RelaxDeviceCopy: null module");
    const DLDevice dev = ModuleDevice(mod);
    const size_t n = CheckedBytes(src, dev, "source"), m = CheckedBytes(dst, dev, "destination");
    if (src->dtype.code != dst->dtype.code || src->dtype.bits != dst->dtype.bits ||
        src->dtype.lanes != dst->dtype.lanes)
      RELAX_THROW("RelaxDeviceCopy: the source is " << relax::runtime::DTypeToString(src->dtype)
                                                    << ", the destination "
                                                    << relax::runtime::DTypeToString(dst->dtype));
    if (n != m)
      RELAX_THROW("RelaxDeviceCopy: the source has " << n << " bytes, the destination " << m);
    if (n == 0) return;
    const char* from = static_cast<const char*>(src->data) + src->byte_offset;
    char* to = static_cast<char*>(dst->data) + dst->byte_offset;
    const DLDevice api_dev = src->device.device_type != kDLCPU ? src->device : dst->device;
    relax::runtime::DeviceAPI::Get(api_dev)->CopyDataFromTo(from, to, n, src->device, dst->device,
                                                            nullptr);
    // A copy to the device may be queued; one to the host has landed.
  });
}

extern "C" int32_t RelaxModuleSetOutputsOnDevice(RelaxModule* mod, int32_t on) {
  return Guard([&] {
    if (!mod) RELAX_THROW("RelaxModuleSetOutputsOnDevice: null module");
    std::lock_guard<std::mutex> lock(mod->mu);
    mod->runner.vm().set_outputs_on_device(on != 0);
  });
}

extern "C" int32_t RelaxModuleDeviceTraffic(const RelaxModule* mod, RelaxDeviceTraffic* out) {
  return Guard([&] {
    if (!mod || !out) RELAX_THROW("RelaxModuleDeviceTraffic: null " << (mod ? "out" : "module"));
    *out = RelaxDeviceTraffic{};
    const DLDevice dev = ModuleDevice(mod);
    if (dev.device_type == kDLCPU) return;
    const relax::runtime::DeviceCounters c = relax::runtime::DeviceAPI::Get(dev)->Counters(dev);
    out->launches = c.launches;
    out->staged_bytes = c.staged_in_bytes + c.staged_out_bytes;
    out->copy_in_bytes = c.copy_in_bytes;
    out->copy_out_bytes = c.copy_out_bytes;
    out->host_mapped_buffers = c.host_mapped_buffers;
  });
}
