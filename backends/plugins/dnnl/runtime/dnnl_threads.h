// Threads and the engine of the dnnl plugin's runtime (dnnl_runtime.cc). Debian's libdnnl is
// built with OpenMP (libgomp): RELAX_NUM_THREADS (1 to 1024) sets omp_set_num_threads once on
// each calling thread, otherwise OpenMP's default applies (OMP_NUM_THREADS, else every core).
#ifndef RELAX_BACKENDS_PLUGINS_DNNL_RUNTIME_DNNL_THREADS_H_
#define RELAX_BACKENDS_PLUGINS_DNNL_RUNTIME_DNNL_THREADS_H_

#include <dnnl.hpp>

namespace relax::backends::plugins::dnnl_rt {

/// Sets the calling thread's thread count for oneDNN once: RELAX_NUM_THREADS, else OpenMP's
/// default (1 when oneDNN runs on another threading runtime).
void ApplyThreads();
/// The count ApplyThreads set on this thread (0 before it ran).
int CallerThreads();
/// Runs oneDNN with `n` threads on this thread from now on (creation and execution of a
/// primitive use the same count).
void UseThreads(int n);
/// The CPU engine, and this thread's stream on it.
dnnl::engine& Engine();
dnnl::stream& Stream();

}  // namespace relax::backends::plugins::dnnl_rt

#endif  // RELAX_BACKENDS_PLUGINS_DNNL_RUNTIME_DNNL_THREADS_H_
