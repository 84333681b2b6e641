// relaxc._runtime_ext (and relaxc_runtime._runtime_ext): a loaded artifact over the runtime's
// embedding C API (relax/runtime/module_api.h): its signature, and runs on host tensors with
// the GIL released. The Python class Module (python/relaxc/_runtime.py) builds on it.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <mutex>
#include <optional>
#include <string>
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

class LoadedModule {
 public:
  // Loads `path` on `device` ("vulkan:1"; none: the artifact's kind, device 0). Throws
  // Failure(kArtifact).
  LoadedModule(const std::string& path, const std::optional<std::string>& device) {
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
    mod_ = mod;
    DLDevice dev{};
    if (RelaxModuleDevice(mod_, &dev) != 0) throw Failure(ErrorKind::kArtifact, LastError());
    device_ = runtime::DeviceToString(dev);
    if (want && want->device_type != dev.device_type)
      throw Failure(ErrorKind::kArtifact,
                    "artifact '" + path + "' runs on " + device_ + ", not on " + *device +
                        " (compile it for that target, or load it with device='" + device_ + "')");
  }
  ~LoadedModule() { Free(); }
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;

  const std::string& device() const { return device_; }

  nb::list Infos(bool input) {
    auto lock = Lock();
    RelaxModule* mod = mod_;
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
  nb::list Run(const nb::sequence& feeds, const std::vector<std::string>& names) {
    std::vector<HostArray> arrays;
    std::vector<DLTensor> tensors;
    const size_t n = nb::len(feeds);
    arrays.reserve(n);
    tensors.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      nb::handle f = feeds[i];
      if (f.is_none()) continue;
      std::string what = "input '" + (i < names.size() ? names[i] : std::to_string(i)) + "'";
      arrays.push_back(ToHostArray(f, what));
      tensors.push_back(ToDLTensor(arrays.back()));
    }
    std::vector<const DLTensor*> in;
    size_t next = 0;
    for (size_t i = 0; i < n; ++i) in.push_back(feeds[i].is_none() ? nullptr : &tensors[next++]);
    std::vector<DLManagedTensor*> out;
    std::string error;
    {
      nb::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mu_);
      if (!mod_) throw Failure(ErrorKind::kError, "module is closed");
      out.assign(static_cast<size_t>(RelaxModuleNumOutputs(mod_)), nullptr);
      if (RelaxModuleRun(mod_, in.data(), static_cast<int32_t>(in.size()), out.data(),
                         static_cast<int32_t>(out.size())) != 0)
        error = LastError();
    }
    if (!error.empty()) throw Failure(ErrorKind::kInput, error);
    return Outputs(out);
  }

  nb::object InputDefault(int32_t index) {
    auto lock = Lock();
    DLManagedTensor* t = nullptr;
    if (RelaxModuleGetInputDefault(mod_, index, &t) != 0)
      throw Failure(ErrorKind::kInput, LastError());
    return ToNumpy(t);
  }

  // Frees the module after a run in progress (on another thread) ends.
  void Close() {
    nb::gil_scoped_release release;
    Free();
  }

 private:
  // mu_, held, on an open module. (Only Run waits for mu_ without the GIL's being held, and
  // it holds mu_ without needing the GIL: taking mu_ with the GIL cannot deadlock.)
  std::unique_lock<std::mutex> Lock() {
    std::unique_lock<std::mutex> lock(mu_);
    if (!mod_) throw Failure(ErrorKind::kError, "module is closed");
    return lock;
  }

  void Free() {
    std::lock_guard<std::mutex> lock(mu_);
    RelaxModuleFree(mod_);
    mod_ = nullptr;
  }

  // Every output as a NumPy array; each tensor is owned by its array (or freed here when an
  // earlier one failed).
  static nb::list Outputs(std::vector<DLManagedTensor*>& out) {
    nb::list result;
    for (size_t i = 0; i < out.size(); ++i) {
      DLManagedTensor* t = out[i];
      out[i] = nullptr;
      try {
        result.append(ToNumpy(t));
      } catch (...) {
        for (DLManagedTensor* rest : out)
          if (rest && rest->deleter) rest->deleter(rest);
        throw;
      }
    }
    return result;
  }

  std::mutex mu_;  // guards mod_: a run holds it, so Close waits for the run
  RelaxModule* mod_ = nullptr;
  std::string device_;
};

}  // namespace

}  // namespace relax::python

NB_MODULE(_runtime_ext, m) {
  using relax::python::LoadedModule;
  relax::python::RegisterErrors(m);
  m.doc() = "relaxc's runtime: load an artifact and run it (the embedding C API)";
  nb::class_<LoadedModule>(m, "LoadedModule")
      .def(nb::init<const std::string&, const std::optional<std::string>&>(), nb::arg("path"),
           nb::arg("device").none() = nb::none())
      .def_prop_ro("device", &LoadedModule::device)
      .def("inputs", [](LoadedModule& l) { return l.Infos(true); })
      .def("outputs", [](LoadedModule& l) { return l.Infos(false); })
      .def("run", &LoadedModule::Run, nb::arg("feeds"), nb::arg("names"))
      .def("input_default", &LoadedModule::InputDefault, nb::arg("index"))
      .def("close", &LoadedModule::Close);
}
