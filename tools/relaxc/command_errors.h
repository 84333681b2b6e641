// How relaxc's subcommands report what their work throws: "error: ..." on stderr (control
// characters escaped, newlines kept) and the exit status: 2 for a usage error or unsupported
// ops, 1 for anything else.
#ifndef RELAX_TOOLS_RELAXC_COMMAND_ERRORS_H_
#define RELAX_TOOLS_RELAXC_COMMAND_ERRORS_H_

#include <exception>
#include <iostream>
#include <new>
#include <string>

#include "relax/driver/compile.h"
#include "relax/frontend/onnx.h"
#include "relax/support/utf8.h"

namespace relax::tools {

/// Runs `body` (returning the exit status) and reports what it throws; `doing` completes "out
/// of memory while ..." ("benchmarking 'm.onnx'").
template <typename Body>
int ReportErrors(Body&& body, const std::string& doing) {
  auto print = [](const char* what) {
    std::cout.flush();
    std::cerr << "error: " << EscapeControl(what, /*keep_newlines=*/true) << "\n";
  };
  try {
    return body();
  } catch (const driver::UsageError& e) {
    print(e.what());
    return 2;
  } catch (const frontend::UnsupportedOpError& e) {
    print(e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    print(("out of memory while " + doing).c_str());
    return 1;
  } catch (const std::exception& e) {
    print(e.what());
    return 1;
  }
}

}  // namespace relax::tools

#endif  // RELAX_TOOLS_RELAXC_COMMAND_ERRORS_H_
