// Error type shared by the compiler and the runtime: every user-facing failure
// (bad model, bad input, corrupt artifact) is a relax::Error with a message that
// names the node/op/dim; tools catch it, print it and exit non-zero.
#ifndef RELAX_SUPPORT_ERROR_H_
#define RELAX_SUPPORT_ERROR_H_

#include <sstream>
#include <stdexcept>
#include <string>

namespace relax {

/// A diagnosable failure. `what()` is the full message shown to the user.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

/// Builds a message with operator<< and throws it as relax::Error on destruction
/// of the temporary: `throw ErrorBuilder() << "bad dim " << d;` is spelled
/// `RELAX_THROW() << ...` below.
class ErrorBuilder {
 public:
  template <typename T>
  ErrorBuilder& operator<<(const T& v) {
    os_ << v;
    return *this;
  }
  [[noreturn]] void Raise() const { throw Error(os_.str()); }
  std::string str() const { return os_.str(); }

 private:
  std::ostringstream os_;
};

/// Usage: RELAX_THROW("Conv '" << name << "': bad pads");
#define RELAX_THROW(msg_stream)      \
  do {                               \
    ::relax::ErrorBuilder relax_eb_; \
    relax_eb_ << msg_stream;         \
    relax_eb_.Raise();               \
  } while (0)

/// Internal invariant check; failing means a compiler bug, reported as an Error
/// (never abort) so tools still exit cleanly with a message.
#define RELAX_ICHECK(cond)                                                                        \
  do {                                                                                            \
    if (!(cond))                                                                                  \
      RELAX_THROW("internal error: check '" #cond "' failed at " << __FILE__ << ":" << __LINE__); \
  } while (0)

}  // namespace relax

#endif  // RELAX_SUPPORT_ERROR_H_
