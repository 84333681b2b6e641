// The Python exceptions of the relaxc packages raised from C++. A binding throws a Failure of
// one kind; the translator that RegisterErrors installs raises the class of that name from
// the package's `_errors` module (relaxc._errors or relaxc_runtime._errors: Error and its
// subclasses CompileError, InputError, ArtifactError) with the message the CLI prints after
// "error: ".
#ifndef RELAX_PYTHON_ERRORS_H_
#define RELAX_PYTHON_ERRORS_H_

#include <nanobind/nanobind.h>

#include <stdexcept>
#include <string>

namespace relax::python {

enum class ErrorKind { kError, kCompile, kInput, kArtifact };

/// A failure the bindings report to Python as the exception class of `kind`.
class Failure : public std::runtime_error {
 public:
  Failure(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

/// Imports the `_errors` module of the package extension `m` belongs to ("relaxc._compiler_ext"
/// -> relaxc._errors) and installs the translator of Failure to its classes.
void RegisterErrors(nanobind::module_& m);

}  // namespace relax::python

#endif  // RELAX_PYTHON_ERRORS_H_
