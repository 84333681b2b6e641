// Threads and the engine of the dnnl plugin's runtime (dnnl_threads.h).
#include "dnnl_threads.h"

#include <dlfcn.h>

#include <cstdlib>

namespace relax::backends::plugins::dnnl_rt {

namespace {

int ConfiguredThreads() {
  static const int n = [] {
    const char* s = std::getenv("RELAX_NUM_THREADS");
    if (s == nullptr || *s == '\0') return 0;
    char* end = nullptr;
    long v = std::strtol(s, &end, 10);
    return (*end == '\0' && v >= 1 && v <= 1024) ? static_cast<int>(v) : 0;
  }();
  return n;
}

// OpenMP's thread-count calls, looked up in the libgomp that came in with libdnnl (in this
// library's local scope); null when oneDNN runs on another threading runtime.
struct OmpFunctions {
  void (*set_num_threads)(int) = nullptr;
  int (*get_max_threads)() = nullptr;
};
const OmpFunctions& Omp() {
  static const OmpFunctions f = [] {
    OmpFunctions o;
    void* h = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
    auto find = [&](const char* name) {
      void* p = h != nullptr ? dlsym(h, name) : nullptr;
      return p != nullptr ? p : dlsym(RTLD_DEFAULT, name);
    };
    o.set_num_threads = reinterpret_cast<void (*)(int)>(find("omp_set_num_threads"));
    o.get_max_threads = reinterpret_cast<int (*)()>(find("omp_get_max_threads"));
    if (o.set_num_threads == nullptr || o.get_max_threads == nullptr) o = OmpFunctions();
    return o;
  }();
  return f;
}

thread_local int t_threads = 0;  // 0: not yet set on this thread
thread_local int t_current = 0;  // what omp_set_num_threads last set here

}  // namespace

void ApplyThreads() {
  if (t_threads != 0) return;
  const OmpFunctions& omp = Omp();
  if (omp.set_num_threads == nullptr) {
    t_threads = t_current = 1;
    return;
  }
  int n = ConfiguredThreads();
  if (n > 0) omp.set_num_threads(n);
  t_threads = t_current = omp.get_max_threads();
}

void UseThreads(int n) {
  if (n == t_current || Omp().set_num_threads == nullptr) return;
  Omp().set_num_threads(n);
  t_current = n;
}

int CallerThreads() { return t_threads; }

dnnl::engine& Engine() {
  static dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

dnnl::stream& Stream() {
  thread_local dnnl::stream s(Engine());
  return s;
}

}  // namespace relax::backends::plugins::dnnl_rt
