// LLVM and MLIR end the process on a fatal error ("LLVM ERROR: ..." and abort). The tools that
// link them install these handlers first, so such an error is an `error:` line naming the
// compile stage (and kernel) it happened in, and exit code 1, never an abort.
#ifndef RELAX_CODEGEN_FATAL_ERROR_H_
#define RELAX_CODEGEN_FATAL_ERROR_H_

#include <string>

namespace relax::codegen {

/// Installs LLVM's fatal-error and out-of-memory handlers for the process (idempotent): they
/// print `error: LLVM fatal error in <stage>: <reason>` (or `error: out of memory in <stage>`)
/// on stderr and exit with code 1. `<stage>` is the innermost FatalErrorStage of the thread
/// that failed ("codegen" when none is open).
void InstallFatalErrorHandlers();

/// Names what the calling thread is doing for the handlers above, for the object's lifetime
/// ("codegen-llvm (kernels fused_conv2d_add, ...)", "codegen-nvptx (kernel k)"). Nests.
class FatalErrorStage {
 public:
  explicit FatalErrorStage(std::string stage);
  ~FatalErrorStage();
  FatalErrorStage(const FatalErrorStage&) = delete;
  FatalErrorStage& operator=(const FatalErrorStage&) = delete;

 private:
  std::string stage_;
  const char* saved_;
};

}  // namespace relax::codegen

#endif  // RELAX_CODEGEN_FATAL_ERROR_H_
