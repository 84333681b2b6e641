// relaxc._compiler_ext: the compiler as a library (relax/driver/compile.h) for Python. Compiles
// with the GIL released; every compile error is a relaxc.CompileError with the CLI's message.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <exception>
#include <map>
#include <new>
#include <string>
#include <utility>

#include "errors.h"
#include "relax/codegen/host_codegen.h"
#include "relax/driver/compile.h"
#include "relax/target/backend.h"
#include "relax/target/target.h"

namespace nb = nanobind;

namespace relax::python {

namespace {

using driver::Artifact;
using driver::CompileOptions;

// Runs `f` without the GIL; any failure becomes Failure(kind) with the message the CLI prints
// after "error: ".
template <typename F>
auto Unlocked(ErrorKind kind, const std::string& what, F&& f) {
  nb::gil_scoped_release release;
  try {
    return f();
  } catch (const Failure&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw Failure(kind, "out of memory while " + what);
  } catch (const std::exception& e) {
    // relax::Error, driver::UsageError, frontend::UnsupportedOpError, and internal errors
    throw Failure(kind, e.what());
  }
}

// The figures of `relaxc compile --stats` a program would test, as a dict.
nb::dict StatsDict(const Artifact& a) {
  nb::dict d;
  d["kernels"] = a.stats.num_prim_funcs;
  d["vm_instructions"] = a.stats.num_instructions;
  d["params_bytes"] = a.stats.params_bytes;
  d["kernel_bytes"] = a.stats.kernel_bytes;
  d["tuned_kernels"] = a.stats.tuned_kernels;
  d["schedule_rules"] = a.stats.schedule_rules;
  d["device_kernels"] = a.stats.device_kernels.size();
  return d;
}

// What the artifact of `target` depends on besides the model and the options: the canonical
// target, the machine its code is built for (cpu: the LLVM CPU name -mcpu resolves to) and
// this machine's triple. The package's artifact cache keys on it.
std::string TargetKey(const std::string& target) {
  return Unlocked(ErrorKind::kCompile, "parsing the target", [&] {
    Target t = Target::Parse(target);
    return t.ToString() + "|machine=" + GetBackend(t.kind).MachineKey(t) +
           "|host=" + codegen::NativeTriple();
  });
}

}  // namespace

}  // namespace relax::python

NB_MODULE(_compiler_ext, m) {
  using relax::driver::Artifact;
  using relax::driver::CompileOptions;
  using relax::python::ErrorKind;
  using relax::python::Unlocked;
  relax::python::RegisterErrors(m);
  m.doc() = "relaxc's compiler (relax::driver::Compile)";

  nb::class_<CompileOptions>(m, "CompileOptions")
      .def(nb::init<>())
      .def_rw("target", &CompileOptions::target)
      .def_rw("bounds", &CompileOptions::bounds)
      .def_rw("byoc", &CompileOptions::byoc)
      .def_rw("plugins", &CompileOptions::plugins)
      .def_rw("pass_options", &CompileOptions::pass_options)
      .def_rw("disabled_passes", &CompileOptions::disabled_passes)
      .def_rw("tuning_db", &CompileOptions::tuning_db)
      .def_rw("freeze_initializers", &CompileOptions::freeze_initializers)
      .def_rw("bounds_check", &CompileOptions::bounds_check)
      .def_rw("verify", &CompileOptions::verify)
      .def_rw("print_after_all", &CompileOptions::print_after_all)
      .def_rw("print_after", &CompileOptions::print_after)
      .def_rw("time_passes", &CompileOptions::time_passes)
      .def_rw("partition_report", &CompileOptions::partition_report)
      .def_rw("partition_graph", &CompileOptions::partition_graph);

  nb::class_<Artifact>(m, "CompiledArtifact")
      .def("bytes",
           [](const Artifact& a) {
             std::string b =
                 Unlocked(ErrorKind::kError, "writing the artifact", [&] { return a.Bytes(); });
             return nb::bytes(b.data(), b.size());
           })
      .def(
          "save",
          [](const Artifact& a, const std::string& path) {
            Unlocked(ErrorKind::kError, "writing the artifact", [&] { a.Save(path); });
          },
          nb::arg("path"))
      .def(
          "stats_text",
          [](const Artifact& a, const std::map<std::string, int64_t>& at) {
            return a.StatsText(at);
          },
          nb::arg("at") = std::map<std::string, int64_t>{})
      .def("stats", &relax::python::StatsDict)
      .def_ro("warnings", &Artifact::warnings)
      .def_ro("partition_report", &Artifact::partition_report)
      .def_ro("partition_dot", &Artifact::partition_dot)
      .def_ro("log", &Artifact::log)
      .def_ro("bounds", &Artifact::bounds);

  m.def(
      "compile_path",
      [](const std::string& path, const CompileOptions& o) {
        return Unlocked(ErrorKind::kCompile, "compiling '" + path + "'",
                        [&] { return relax::driver::Compile(path, o); });
      },
      nb::arg("path"), nb::arg("options"));
  m.def(
      "compile_bytes",
      [](nb::bytes model, const std::string& name, const CompileOptions& o) {
        std::string bytes(model.c_str(), model.size());
        return Unlocked(ErrorKind::kCompile, "compiling '" + name + "'",
                        [&] { return relax::driver::CompileOnnxBytes(bytes, name, o); });
      },
      nb::arg("model"), nb::arg("name"), nb::arg("options"));
  m.def("target_key", &relax::python::TargetKey, nb::arg("target"));
}
