// Thread-local last-error storage of the C callee ABI (RelaxSetLastError/RelaxGetLastError).
#include "relax/runtime/c_api.h"

#include <string>

namespace {
thread_local std::string g_last_error;
}  // namespace

extern "C" void RelaxSetLastError(const char* msg) { g_last_error = msg ? msg : ""; }

extern "C" const char* RelaxGetLastError(void) { return g_last_error.c_str(); }

extern "C" const RelaxRuntimeTable* RelaxGetRuntimeTable(void) {
  static const RelaxRuntimeTable table = {RELAX_RUNTIME_TABLE_VERSION, 7,
                                          &RelaxSetLastError,          &RelaxGetLastError,
                                          &RelaxParallelFor,           &RelaxCheckKernelArgs,
                                          &RelaxWorkspaceAlloc,        &RelaxWorkspaceFree,
                                          &RelaxLaunchKernel};
  return &table;
}
