// RegisterErrors: Failure -> the package's Python exception classes (errors.h).
#include "errors.h"

#include <nanobind/stl/string.h>

#include <array>
#include <exception>
#include <string>

namespace nb = nanobind;

namespace relax::python {

namespace {

// The classes, by ErrorKind. Held for the life of the process: the translator may run until
// the interpreter finalizes, so the references are never released.
struct ErrorClasses {
  std::array<PyObject*, 4> types{};
};

void Translate(const std::exception_ptr& p, void* payload) {
  try {
    std::rethrow_exception(p);
  } catch (const Failure& f) {
    const auto* classes = static_cast<const ErrorClasses*>(payload);
    PyErr_SetString(classes->types[static_cast<size_t>(f.kind())], f.what());
  }
}

}  // namespace

void RegisterErrors(nb::module_& m) {
  std::string name = nb::cast<std::string>(m.attr("__name__"));
  std::string package = name.substr(0, name.rfind('.'));
  nb::module_ errors = nb::module_::import_((package + "._errors").c_str());
  auto* classes = new ErrorClasses();  // never freed (above)
  const char* names[] = {"Error", "CompileError", "InputError", "ArtifactError"};
  for (size_t i = 0; i < classes->types.size(); ++i)
    classes->types[i] = errors.attr(names[i]).inc_ref().ptr();
  nb::register_exception_translator(Translate, classes);
}

}  // namespace relax::python
