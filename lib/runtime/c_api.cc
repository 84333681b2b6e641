// Thread-local last-error storage of the C callee ABI (RelaxSetLastError/RelaxGetLastError).
#include "relax/runtime/c_api.h"

#include <string>

namespace {
thread_local std::string g_last_error;
}  // namespace

extern "C" void RelaxSetLastError(const char* msg) { g_last_error = msg ? msg : ""; }

extern "C" const char* RelaxGetLastError(void) { return g_last_error.c_str(); }

extern "C" void RelaxReportIndexError(const char* what, int64_t index, int64_t extent) {
  g_last_error = std::string(what ? what : "a kernel's index") + " is " + std::to_string(index) +
                 ", outside [0, " + std::to_string(extent) + ")";
}

extern "C" const RelaxRuntimeTable* RelaxGetRuntimeTable(void) {
  static const RelaxRuntimeTable table = {RELAX_RUNTIME_TABLE_VERSION, 8,
                                          &RelaxSetLastError,          &RelaxGetLastError,
                                          &RelaxParallelFor,           &RelaxCheckKernelArgs,
                                          &RelaxWorkspaceAlloc,        &RelaxWorkspaceFree,
                                          &RelaxLaunchKernel,          &RelaxReportIndexError};
  return &table;
}
