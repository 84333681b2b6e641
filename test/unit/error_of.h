// ErrorOf: the message of the relax::Error a test action throws, for EXPECT_NE(...find(...)).
#ifndef RELAX_TEST_UNIT_ERROR_OF_H_
#define RELAX_TEST_UNIT_ERROR_OF_H_

#include <functional>
#include <string>

#include "relax/support/error.h"

namespace relax::test {

/// What `f` throws as relax::Error (its what()), or "<no error>" when it returns.
inline std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace relax::test

#endif  // RELAX_TEST_UNIT_ERROR_OF_H_
