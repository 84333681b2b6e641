// librelax_byoc_dnnl.so: the library dnnl artifacts name. A thin entry that loads the oneDNN part
// (librelax_byoc_dnnl_impl.so, dnnl_runtime.cc, from this library's directory) on first use and
// forwards to it.
//
// Why two libraries: Debian's libdnnl runs on OpenMP (libgomp), which reads OMP_WAIT_POLICY once,
// when it is loaded. Its default lets idle OpenMP workers spin after every parallel region; with
// relaxc's own pool running the kernels between dnnl regions, that spinning takes cores from them
// (measured on the 2-core dev machine: the classifier at 2 threads ~25x slower under load). This
// entry sets OMP_WAIT_POLICY=passive before libgomp loads, unless the user set a policy or
// libgomp is already in the process; then it dlopen()s the part that links libdnnl.
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "relax/runtime/c_api.h"

#define RELAX_DNNL_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

struct Impl {
  RelaxPackedFunc run = nullptr;
  RelaxInitFunc init = nullptr;
  const char* (*last_error)() = nullptr;
  std::string error;  // why the part could not be loaded
};

const RelaxRuntimeTable* g_table = nullptr;
thread_local std::string t_last_error;

std::string OwnDirectory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&OwnDirectory), &info) == 0 || info.dli_fname == nullptr)
    return "";
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

const Impl& LoadImpl() {
  static Impl impl;
  static std::once_flag once;
  std::call_once(once, [] {
    if (std::getenv("OMP_WAIT_POLICY") == nullptr &&
        dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD) == nullptr)
      setenv("OMP_WAIT_POLICY", "passive", 0);
    const char* name = "librelax_byoc_dnnl_impl.so";
    std::string path = OwnDirectory() + name;
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* e = dlerror();
      impl.error = std::string("cannot load ") + path + ": " + (e ? e : "unknown error");
      return;
    }
    impl.run = reinterpret_cast<RelaxPackedFunc>(dlsym(h, "relax_dnnl_impl_run"));
    impl.init = reinterpret_cast<RelaxInitFunc>(dlsym(h, "relax_dnnl_impl_init"));
    impl.last_error = reinterpret_cast<const char* (*)()>(dlsym(h, "relax_dnnl_impl_last_error"));
    if (impl.run == nullptr || impl.init == nullptr || impl.last_error == nullptr) {
      impl.run = nullptr;
      impl.error = path + " lacks the relax_dnnl_impl_* functions (a stale build?)";
    }
  });
  return impl;
}

int32_t Fail(const std::string& msg) {
  t_last_error = "dnnl: " + msg;
  if (g_table != nullptr && g_table->set_last_error != nullptr)
    g_table->set_last_error(t_last_error.c_str());
  return 1;
}

}  // namespace

/// The region function (RelaxPackedFunc): see dnnl_runtime.cc.
RELAX_DNNL_EXPORT int32_t relax_dnnl_run(const RelaxValue* args, int32_t num_args,
                                         RelaxValue* ret) {
  const Impl& impl = LoadImpl();
  if (impl.run == nullptr) return Fail(impl.error);
  return impl.run(args, num_args, ret);
}

/// Receives the runtime's function table when an artifact using this library loads. A oneDNN
/// part that cannot be loaded is reported by the first call (with the reason), not here.
RELAX_DNNL_EXPORT int32_t __relax_init(const RelaxRuntimeTable* table) {
  if (table == nullptr || table->version != RELAX_RUNTIME_TABLE_VERSION || table->num_entries < 1)
    return 1;
  g_table = table;
  const Impl& impl = LoadImpl();
  return impl.init != nullptr && impl.run != nullptr ? impl.init(table) : 0;
}

/// The calling thread's last error of this library ("" when none), for programs that call
/// relax_dnnl_run without a runtime table.
RELAX_DNNL_EXPORT const char* relax_dnnl_last_error(void) {
  const Impl& impl = LoadImpl();
  return impl.run != nullptr ? impl.last_error() : t_last_error.c_str();
}
