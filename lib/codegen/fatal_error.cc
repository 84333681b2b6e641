// InstallFatalErrorHandlers and FatalErrorStage (include/relax/codegen/fatal_error.h).
#include "relax/codegen/fatal_error.h"

#include <llvm/Support/ErrorHandling.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace relax::codegen {
namespace {

thread_local const char* t_stage = nullptr;

// Writes without allocating: the out-of-memory handler must not need memory.
void Put(const char* s) {
  size_t n = std::strlen(s);
  while (n > 0) {
    ssize_t w = ::write(2, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

[[noreturn]] void Report(const char* what, const char* reason) {
  Put("error: ");
  Put(what);
  Put(" in ");
  Put(t_stage ? t_stage : "codegen");
  if (reason && *reason) {
    Put(": ");
    Put(reason);
  }
  Put("\n");
  std::_Exit(1);
}

void OnFatalError(void*, const char* reason, bool) { Report("LLVM fatal error", reason); }
void OnBadAlloc(void*, const char* reason, bool) { Report("out of memory", reason); }

}  // namespace

void InstallFatalErrorHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::install_fatal_error_handler(OnFatalError);
    llvm::install_bad_alloc_error_handler(OnBadAlloc);
  });
}

FatalErrorStage::FatalErrorStage(std::string stage) : stage_(std::move(stage)), saved_(t_stage) {
  t_stage = stage_.c_str();
}

FatalErrorStage::~FatalErrorStage() { t_stage = saved_; }

}  // namespace relax::codegen
