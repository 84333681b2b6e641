// relaxc._runtime_ext (and relaxc_runtime._runtime_ext): a loaded artifact over the runtime's
// embedding C API (relax/runtime/module_api.h): its signature, runs on host tensors and on
// tensors in the memory of the module's device (DeviceTensor), device copies and traffic, with
// the GIL released. The Python class Module (python/relaxc/_runtime.py) builds on it.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "errors.h"
#include "relax/runtime/device_api.h"
#include "relax/runtime/module_api.h"
#include "relax/support/error.h"
#include "tensors.h"

namespace nb = nanobind;

namespace relax::python {

namespace {

std::string LastError() {
  const char* m = RelaxGetLastError();
  return m ? m : "unknown error";
}

// One input or output as Python sees it: (name, dtype, shape with -1 for a symbolic dim, the
// symbolic dims' names or None, has_default).
nb::tuple InfoTuple(const RelaxTensorInfo& info, bool has_default) {
  nb::list shape, names;
  for (int32_t d = 0; d < info.ndim; ++d) {
    shape.append(info.shape[d]);
    if (info.dim_names[d])
      names.append(nb::str(info.dim_names[d]));
    else
      names.append(nb::none());
  }
  return nb::make_tuple(nb::str(info.name), nb::str(info.dtype_name), nb::tuple(shape),
                        nb::tuple(names), has_default);
}

class DeviceTensor;

// What a module and its device tensors share: the C API module (null once closed) and the
// allocations of Module.to_device that closing it frees. A DeviceTensor holds it, so the module
// is freed when the last of them and the LoadedModule goes (or at close()).
struct ModuleState {
  std::mutex mu;  // guards mod and allocated: a run or device copy holds it
  RelaxModule* mod = nullptr;
  DLDevice dev{};
  std::string device;
  std::unordered_set<DeviceTensor*> allocated;  // to_device tensors not yet freed
  // A closed module whose to_device tensors still had DLPack views: freed with the last of
  // them (mod is null then, so every call sees the module closed).
  RelaxModule* retired = nullptr;
  ~ModuleState() {
    RelaxModuleFree(mod);
    RelaxModuleFree(retired);
  }
};

// Guards every DeviceTensor's `uses` and `freed` (a run pins the tensors it reads; free()
// waits for them). Held only briefly; taken with a ModuleState::mu held or not, but never held
// while taking one (lock order: mu, then this).
std::mutex g_tensors_mu;
std::condition_variable g_tensors_cv;

// A tensor in the memory of a module's device (module_api.h "Tensors on the artifact's
// device"): from Module.to_device (RelaxDeviceAlloc) or a device output of a run.
class DeviceTensor {
 public:
  DeviceTensor(std::shared_ptr<ModuleState> state, const DLTensor& dl,
               DLManagedTensor* managed = nullptr)
      : state_(std::move(state)), managed_(managed), dl_(dl) {
    shape_.assign(dl.shape, dl.shape + dl.ndim);
    dl_.shape = shape_.data();
    dl_.strides = nullptr;
  }
  ~DeviceTensor() { Free(); }
  DeviceTensor(const DeviceTensor&) = delete;
  DeviceTensor& operator=(const DeviceTensor&) = delete;

  const DLTensor& dl() const { return dl_; }
  DLTensor* mutable_dl() { return &dl_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  const std::string& device() const { return state_->device; }
  const std::shared_ptr<ModuleState>& state() const { return state_; }

  // Marks the tensor read by a run or copy until Unpin (free() waits); Failure when freed.
  // Taken with the module's mu held (close, holding it, then sees every pin of its runs).
  void Pin(const std::string& what) {
    std::lock_guard<std::mutex> lock(g_tensors_mu);
    if (freed_) throw Failure(ErrorKind::kError, what + "device tensor is freed");
    ++uses_;
  }
  void Unpin() {
    std::lock_guard<std::mutex> lock(g_tensors_mu);
    --uses_;
    g_tensors_cv.notify_all();
  }

  // Releases the memory once the runs reading it end (idempotent); while DLPack views of it
  // are alive (np.from_dlpack, torch.from_dlpack), the tensor is freed for Python (runs and
  // numpy() refuse it) and the memory when the last view goes. A to_device allocation is freed
  // by whichever of this and the module's close comes first.
  void Free() {
    {
      std::unique_lock<std::mutex> lock(g_tensors_mu);
      g_tensors_cv.wait(lock, [&] { return uses_ == 0; });
      const bool was_freed = freed_;
      freed_ = true;
      if (was_freed) return;
      if (views_ > 0) {
        release_pending_ = true;
        return;
      }
    }
    Release();
  }

  // Called by the module's close (state mu held): frees the allocation once the runs reading
  // it end (runs of other modules: this module's runs pin under mu); false when DLPack views
  // keep it (released with the last of them).
  bool FreeForClose(RelaxModule* mod) {
    {
      std::unique_lock<std::mutex> lock(g_tensors_mu);
      g_tensors_cv.wait(lock, [&] { return uses_ == 0; });
      freed_ = true;
      if (views_ > 0) {
        release_pending_ = true;
        return false;
      }
    }
    RelaxDeviceFree(mod, dl_.data);
    return true;
  }

  // A new NumPy array with the contents (one copy from the device).
  nb::object Numpy() {
    nb::dlpack::dtype dt = NumpyDType(dl_.dtype);
    std::vector<size_t> shape(shape_.begin(), shape_.end());
    size_t count = 1;
    for (size_t d : shape) count *= d;
    const size_t nbytes = count * (dt.bits / 8);
    auto* buffer = new uint8_t[nbytes ? nbytes : 1];
    nb::capsule owner(buffer, [](void* p) noexcept { delete[] static_cast<uint8_t*>(p); });
    DLTensor host = dl_;
    host.data = buffer;
    host.device = DLDevice{kDLCPU, 0};
    std::string error;
    {
      nb::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(state_->mu);
      Pin("");
      if (!state_->mod)
        error = "module is closed";
      else if (RelaxDeviceCopy(state_->mod, &dl_, &host) != 0)
        error = LastError();
      Unpin();
    }
    if (!error.empty()) throw Failure(ErrorKind::kError, error);
    nb::ndarray<nb::numpy> array(buffer, shape.size(), shape.data(), owner, nullptr, dt);
    return array.cast();
  }

  nb::object DType() const {
    nb::dlpack::dtype dt = NumpyDType(dl_.dtype);
    const char* kind = dt.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Bool)    ? "bool"
                       : dt.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Float) ? "float"
                       : dt.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Int)   ? "int"
                                                                                        : "uint";
    std::string name = kind;
    if (name != "bool") name += std::to_string(dt.bits);
    return nb::module_::import_("numpy").attr("dtype")(name);
  }

  // "DeviceTensor(float32[2, 9, 3], vulkan:0)" ("freed" for the device once freed).
  std::string Repr() {
    std::string dims;
    for (size_t i = 0; i < shape_.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape_[i]);
    bool freed = false;
    {
      std::lock_guard<std::mutex> lock(g_tensors_mu);
      freed = freed_;
    }
    return "DeviceTensor(" + nb::cast<std::string>(nb::str(DType())) + "[" + dims + "], " +
           (freed ? std::string("freed") : state_->device) + ")";
  }

  // (DLPack device type, id), as __dlpack_device__ returns it.
  nb::tuple DLPackDevice() const {
    return nb::make_tuple(static_cast<int>(dl_.device.device_type), dl_.device.device_id);
  }

  // A DLPack capsule ("dltensor") viewing the memory; the view keeps `self` alive. free() or
  // closing the module invalidates it.
  nb::object DLPack(nb::handle self) {
    {
      std::lock_guard<std::mutex> lock(g_tensors_mu);
      if (freed_) throw Failure(ErrorKind::kError, "device tensor is freed");
    }
    struct View {
      DLManagedTensor managed;
      std::vector<int64_t> shape;
      PyObject* owner;
      DeviceTensor* tensor;  // kept alive by owner
    };
    {
      std::lock_guard<std::mutex> lock(g_tensors_mu);
      if (freed_) throw Failure(ErrorKind::kError, "device tensor is freed");
      ++views_;
    }
    auto* view = new View{DLManagedTensor{}, shape_, self.inc_ref().ptr(), this};
    view->managed.dl_tensor = dl_;
    view->managed.dl_tensor.shape = view->shape.data();
    view->managed.manager_ctx = view;
    view->managed.deleter = [](DLManagedTensor* m) {
      auto* v = static_cast<View*>(m->manager_ctx);
      v->tensor->ViewReleased();
      PyGILState_STATE gil = PyGILState_Ensure();
      Py_DECREF(v->owner);
      PyGILState_Release(gil);
      delete v;
    };
    PyObject* capsule = PyCapsule_New(&view->managed, "dltensor", [](PyObject* c) {
      // Not consumed (still named "dltensor"): the producer's view is released here.
      if (PyCapsule_IsValid(c, "dltensor")) {
        auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, "dltensor"));
        if (m && m->deleter) m->deleter(m);
      }
    });
    if (!capsule) {
      view->managed.deleter(&view->managed);
      throw nb::python_error();
    }
    return nb::steal(capsule);
  }

 private:
  // The last DLPack view is gone: the memory a free() or close() left to it is released.
  void ViewReleased() {
    {
      std::lock_guard<std::mutex> lock(g_tensors_mu);
      if (--views_ > 0 || !release_pending_) return;
      release_pending_ = false;
    }
    Release();
  }

  // Gives the memory back: a run output's to its deleter, a to_device allocation to the module
  // (or to the closed module it outlived, freed with its last such allocation).
  void Release() {
    if (managed_) {
      if (managed_->deleter) managed_->deleter(managed_);
      managed_ = nullptr;
      return;
    }
    std::lock_guard<std::mutex> lock(state_->mu);
    RelaxModule* mod = state_->mod ? state_->mod : state_->retired;
    if (state_->allocated.erase(this) && mod) RelaxDeviceFree(mod, dl_.data);
    if (!state_->mod && state_->retired && state_->allocated.empty()) {
      RelaxModuleFree(state_->retired);
      state_->retired = nullptr;
    }
  }

  std::shared_ptr<ModuleState> state_;
  DLManagedTensor* managed_ = nullptr;  // a run's device output (its deleter frees it)
  DLTensor dl_;
  std::vector<int64_t> shape_;
  int uses_ = 0;                  // g_tensors_mu
  int views_ = 0;                 // g_tensors_mu: live DLPack views
  bool freed_ = false;            // g_tensors_mu
  bool release_pending_ = false;  // g_tensors_mu: freed, the memory waiting for the views
};

class LoadedModule {
 public:
  // Loads `path` on `device` ("vulkan:1"; none: the artifact's kind, device 0). Throws
  // Failure(kArtifact).
  LoadedModule(const std::string& path, const std::optional<std::string>& device)
      : state_(std::make_shared<ModuleState>()) {
    std::optional<DLDevice> want;
    if (device) {
      try {
        want = runtime::ParseDevice(*device);
      } catch (const Error& e) {
        throw Failure(ErrorKind::kArtifact, e.what());
      }
    }
    RelaxModule* mod = nullptr;
    int32_t rc = 0;
    std::string error;
    {
      nb::gil_scoped_release release;
      rc = RelaxModuleLoadOnDevice(path.c_str(), want ? want->device_id : 0, &mod);
      if (rc != 0) error = LastError();
    }
    if (rc != 0) throw Failure(ErrorKind::kArtifact, error);
    state_->mod = mod;
    DLDevice dev{};
    if (RelaxModuleDevice(mod, &dev) != 0) throw Failure(ErrorKind::kArtifact, LastError());
    state_->dev = dev;
    state_->device = runtime::DeviceToString(dev);
    if (want && want->device_type != dev.device_type)
      throw Failure(ErrorKind::kArtifact, "artifact '" + path + "' runs on " + state_->device +
                                              ", not on " + *device +
                                              " (compile it for that target, or load it with "
                                              "device='" +
                                              state_->device + "')");
  }
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;

  const std::string& device() const { return state_->device; }

  nb::list Infos(bool input) {
    auto lock = Lock();
    RelaxModule* mod = state_->mod;
    nb::list out;
    int32_t n = input ? RelaxModuleNumInputs(mod) : RelaxModuleNumOutputs(mod);
    for (int32_t i = 0; i < n; ++i) {
      RelaxTensorInfo info{};
      int32_t flag = 0;
      if ((input ? RelaxModuleGetInputInfo(mod, i, &info)
                 : RelaxModuleGetOutputInfo(mod, i, &info)) != 0 ||
          (input && RelaxModuleInputHasDefault(mod, i, &flag) != 0))
        throw Failure(ErrorKind::kArtifact, LastError());
      out.append(InfoTuple(info, flag != 0));
    }
    return out;
  }

  // Runs on `feeds`: one entry per input, in order; None for an input that takes its default.
  // A feed is a host tensor (NumPy, DLPack CPU), a DeviceTensor, or a DLPack tensor on the
  // module's device (both read in place). outputs_on_device: a GPU module's outputs stay on
  // the device, as DeviceTensors.
  nb::list Run(const nb::sequence& feeds, const std::vector<std::string>& names,
               bool outputs_on_device) {
    const size_t n = nb::len(feeds);
    std::vector<HostArray> arrays;
    std::vector<nb::ndarray<nb::c_contig>> foreign;  // DLPack tensors on the module's device
    std::vector<DLTensor> tensors;
    std::vector<std::pair<DeviceTensor*, std::string>> device_feeds;  // pinned once mu is held
    std::vector<DeviceTensor*> pinned;
    arrays.reserve(n);
    foreign.reserve(n);
    tensors.reserve(n);
    struct Unpinner {
      std::vector<DeviceTensor*>& pinned;
      ~Unpinner() {
        for (DeviceTensor* t : pinned) t->Unpin();
      }
    } unpin{pinned};
    for (size_t i = 0; i < n; ++i) {
      nb::handle f = feeds[i];
      if (f.is_none()) continue;
      std::string what = "input '" + (i < names.size() ? names[i] : std::to_string(i)) + "'";
      DeviceTensor* d = nullptr;
      if (nb::try_cast(f, d, /*convert=*/false) && d) {
        CheckDevice(d->dl().device, what);
        device_feeds.emplace_back(d, what);
        tensors.push_back(d->dl());
      } else if (std::optional<DLDevice> dev = ForeignDevice(f); dev) {
        CheckDevice(*dev, what);
        nb::ndarray<nb::c_contig> a;
        if (!nb::try_cast(f, a, /*convert=*/false))
          throw Failure(ErrorKind::kInput, what + ": a tensor on " + state_->device +
                                               " that DLPack cannot describe as C-contiguous");
        foreign.push_back(a);
        DLTensor t{};
        t.data = a.data();
        t.device = state_->dev;
        t.ndim = static_cast<int32_t>(a.ndim());
        t.dtype = DLDataType{a.dtype().code, a.dtype().bits, a.dtype().lanes};
        t.shape = const_cast<int64_t*>(a.shape_ptr());
        tensors.push_back(t);
      } else {
        arrays.push_back(ToHostArray(f, what));
        tensors.push_back(ToDLTensor(arrays.back()));
      }
    }
    std::vector<const DLTensor*> in;
    size_t next = 0;
    for (size_t i = 0; i < n; ++i) in.push_back(feeds[i].is_none() ? nullptr : &tensors[next++]);
    std::vector<DLManagedTensor*> out;
    std::string error;
    {
      nb::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(state_->mu);
      if (!state_->mod) throw Failure(ErrorKind::kError, "module is closed");
      for (auto& [d, what] : device_feeds) {
        d->Pin(what + ": ");
        pinned.push_back(d);
      }
      out.assign(static_cast<size_t>(RelaxModuleNumOutputs(state_->mod)), nullptr);
      if (RelaxModuleSetOutputsOnDevice(state_->mod, outputs_on_device ? 1 : 0) != 0 ||
          RelaxModuleRun(state_->mod, in.data(), static_cast<int32_t>(in.size()), out.data(),
                         static_cast<int32_t>(out.size())) != 0)
        error = LastError();
    }
    if (!error.empty()) throw Failure(ErrorKind::kInput, error);
    return Outputs(out);
  }

  // A DeviceTensor holding a copy of `array` (a NumPy array or DLPack CPU tensor).
  nb::object ToDevice(nb::handle array) {
    HostArray a = ToHostArray(array, "to_device");
    DLTensor host = ToDLTensor(a);
    try {
      NumpyDType(host.dtype);  // an unsupported dtype fails before anything is allocated
    } catch (const Failure&) {
      throw Failure(ErrorKind::kInput, "to_device: unsupported dtype (DLPack code " +
                                           std::to_string(host.dtype.code) + ", " +
                                           std::to_string(host.dtype.bits) +
                                           " bits; expected bool, int, uint or float)");
    }
    size_t nbytes = (host.dtype.bits + 7) / 8;
    for (int32_t d = 0; d < host.ndim; ++d) nbytes *= static_cast<size_t>(host.shape[d]);
    std::string error;
    DeviceTensor* t = nullptr;
    {
      nb::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(state_->mu);
      void* data = nullptr;
      if (!state_->mod) {
        error = "module is closed";
      } else if (RelaxDeviceAlloc(state_->mod, nbytes, &data) != 0) {
        error = LastError();
      } else {
        DLTensor dev = host;
        dev.data = data;
        dev.device = state_->dev;
        t = new DeviceTensor(state_, dev);
        state_->allocated.insert(t);
        if (RelaxDeviceCopy(state_->mod, &host, t->mutable_dl()) != 0) error = LastError();
      }
    }
    if (!error.empty()) {
      delete t;  // frees the allocation
      throw Failure(ErrorKind::kError, error);
    }
    return nb::cast(t, nb::rv_policy::take_ownership);
  }

  nb::dict DeviceTraffic() {
    RelaxDeviceTraffic t{};
    {
      auto lock = Lock();
      if (RelaxModuleDeviceTraffic(state_->mod, &t) != 0)
        throw Failure(ErrorKind::kError, LastError());
    }
    nb::dict d;
    d["launches"] = t.launches;
    d["staged_bytes"] = t.staged_bytes;
    d["copy_in_bytes"] = t.copy_in_bytes;
    d["copy_out_bytes"] = t.copy_out_bytes;
    d["host_mapped_buffers"] = t.host_mapped_buffers;
    return d;
  }

  nb::object InputDefault(int32_t index) {
    auto lock = Lock();
    DLManagedTensor* t = nullptr;
    if (RelaxModuleGetInputDefault(state_->mod, index, &t) != 0)
      throw Failure(ErrorKind::kInput, LastError());
    return ToNumpy(t);
  }

  // Frees the module and the tensors of to_device after a run in progress (on another
  // thread) ends; device outputs of runs stay valid but cannot be copied back.
  void Close() {
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(state_->mu);
    if (!state_->mod) return;
    std::unordered_set<DeviceTensor*> viewed;  // DLPack views keep these (and the module)
    for (DeviceTensor* t : state_->allocated)
      if (!t->FreeForClose(state_->mod)) viewed.insert(t);
    state_->allocated = std::move(viewed);
    if (state_->allocated.empty())
      RelaxModuleFree(state_->mod);
    else
      state_->retired = state_->mod;
    state_->mod = nullptr;
  }

 private:
  // state_->mu, held, on an open module. (Runs and device copies wait for it with the GIL
  // released and hold it without needing the GIL: taking it with the GIL cannot deadlock.)
  std::unique_lock<std::mutex> Lock() {
    std::unique_lock<std::mutex> lock(state_->mu);
    if (!state_->mod) throw Failure(ErrorKind::kError, "module is closed");
    return lock;
  }

  void CheckDevice(DLDevice dev, const std::string& what) const {
    if (dev.device_type == kDLCPU) return;
    if (dev.device_type != state_->dev.device_type || dev.device_id != state_->dev.device_id)
      throw Failure(ErrorKind::kInput, what + ": a tensor on " + runtime::DeviceToString(dev) +
                                           ", but the module runs on " + state_->device);
  }

  // The device of a DLPack tensor not in host memory (__dlpack_device__), else none.
  static std::optional<DLDevice> ForeignDevice(nb::handle f) {
    if (!nb::hasattr(f, "__dlpack_device__")) return std::nullopt;
    nb::tuple dev = nb::cast<nb::tuple>(f.attr("__dlpack_device__")());
    const int type = nb::cast<int>(dev[0]);
    if (type == kDLCPU || type == kDLCUDAHost) return std::nullopt;
    return DLDevice{static_cast<DLDeviceType>(type), nb::cast<int32_t>(dev[1])};
  }

  // Every output as a NumPy array (host) or a DeviceTensor (device); each tensor is owned by
  // its object (or freed here when an earlier one failed).
  nb::list Outputs(std::vector<DLManagedTensor*>& out) {
    nb::list result;
    std::unordered_set<void*> seen;  // an output the VM returns twice (y = Identity(x))
    for (size_t i = 0; i < out.size(); ++i) {
      DLManagedTensor* t = out[i];
      out[i] = nullptr;
      try {
        void* data = static_cast<char*>(t->dl_tensor.data) + t->dl_tensor.byte_offset;
        const bool shared = data && !seen.insert(data).second;
        if (t->dl_tensor.device.device_type == kDLCPU && shared)
          result.append(ToNumpy(t).attr("copy")());  // each output its own array, as in ORT
        else if (t->dl_tensor.device.device_type == kDLCPU)
          result.append(ToNumpy(t));
        else
          result.append(
              nb::cast(new DeviceTensor(state_, t->dl_tensor, t), nb::rv_policy::take_ownership));
      } catch (...) {
        for (DLManagedTensor* rest : out)
          if (rest && rest->deleter) rest->deleter(rest);
        throw;
      }
    }
    return result;
  }

  std::shared_ptr<ModuleState> state_;
};

}  // namespace

}  // namespace relax::python

NB_MODULE(_runtime_ext, m) {
  using relax::python::DeviceTensor;
  using relax::python::LoadedModule;
  relax::python::RegisterErrors(m);
  m.doc() = "relaxc's runtime: load an artifact and run it (the embedding C API)";
  nb::class_<DeviceTensor>(m, "DeviceTensor")
      .def_prop_ro("shape",
                   [](const DeviceTensor& t) {
                     nb::list dims;
                     for (int64_t d : t.shape()) dims.append(d);
                     return nb::tuple(dims);
                   })
      .def_prop_ro("dtype", &DeviceTensor::DType)
      .def_prop_ro("device", &DeviceTensor::device)
      .def("numpy", &DeviceTensor::Numpy)
      .def("__repr__", &DeviceTensor::Repr)
      .def("free",
           [](DeviceTensor& t) {
             nb::gil_scoped_release release;
             t.Free();
           })
      .def("__dlpack__",  // (stream, max_version, dl_device, copy: taken, not needed)
           [](DeviceTensor& t, const nb::args&, const nb::kwargs&) {
             return t.DLPack(nb::find(&t));
           })
      .def("__dlpack_device__", &DeviceTensor::DLPackDevice);
  nb::class_<LoadedModule>(m, "LoadedModule")
      .def(nb::init<const std::string&, const std::optional<std::string>&>(), nb::arg("path"),
           nb::arg("device").none() = nb::none())
      .def_prop_ro("device", &LoadedModule::device)
      .def("inputs", [](LoadedModule& l) { return l.Infos(true); })
      .def("outputs", [](LoadedModule& l) { return l.Infos(false); })
      .def("run", &LoadedModule::Run, nb::arg("feeds"), nb::arg("names"),
           nb::arg("outputs_on_device") = false)
      .def("to_device", &LoadedModule::ToDevice, nb::arg("array"))
      .def("device_traffic", &LoadedModule::DeviceTraffic)
      .def("input_default", &LoadedModule::InputDefault, nb::arg("index"))
      .def("close", &LoadedModule::Close);
}
