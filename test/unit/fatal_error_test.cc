// LLVM fatal errors in the tools (include/relax/codegen/fatal_error.h): an `error:` line naming
// the stage and exit code 1, never "LLVM ERROR" and an abort.
#include "relax/codegen/fatal_error.h"

#include <gtest/gtest.h>
#include <llvm/Support/ErrorHandling.h>

namespace relax::codegen {
namespace {

TEST(FatalErrorDeathTest, NamesTheStageAndExitsOne) {
  EXPECT_EXIT(
      {
        InstallFatalErrorHandlers();
        FatalErrorStage outer("codegen-llvm (kernels a, b)");
        llvm::report_fatal_error("Cannot select: intrinsic");
      },
      ::testing::ExitedWithCode(1),
      "^error: LLVM fatal error in codegen-llvm \\(kernels a, b\\): Cannot select: intrinsic\n$");
}

TEST(FatalErrorDeathTest, InnermostStageOnThisThread) {
  EXPECT_EXIT(
      {
        InstallFatalErrorHandlers();
        FatalErrorStage outer("codegen-llvm (kernels a)");
        { FatalErrorStage inner("discarded"); }
        FatalErrorStage nvptx("codegen-nvptx (kernel k, -arch=sm_100)");
        llvm::report_fatal_error("PTX version");
      },
      ::testing::ExitedWithCode(1), "error: LLVM fatal error in codegen-nvptx \\(kernel k");
}

TEST(FatalErrorDeathTest, NoStageIsCodegen) {
  EXPECT_EXIT(
      {
        InstallFatalErrorHandlers();
        llvm::report_fatal_error("boom");
      },
      ::testing::ExitedWithCode(1), "error: LLVM fatal error in codegen: boom");
}

TEST(FatalErrorDeathTest, OutOfMemory) {
  EXPECT_EXIT(
      {
        InstallFatalErrorHandlers();
        FatalErrorStage s("codegen-llvm (kernels big)");
        llvm::report_bad_alloc_error("Allocation failed");
      },
      ::testing::ExitedWithCode(1), "error: out of memory in codegen-llvm \\(kernels big\\)");
}

}  // namespace
}  // namespace relax::codegen
