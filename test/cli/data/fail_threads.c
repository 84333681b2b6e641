/* LD_PRELOAD shim for the thread-start tests (test/cli/thread_start_cases.py): once armed,
 * pthread_create fails with EAGAIN, as under a container's pid or thread limit, after `after`
 * more threads. Armed at load by FAIL_THREADS_AFTER=N, or by fail_threads_arm(N) (a Python host
 * arms it after its own imports, which start threads of their own). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef int (*CreateFn)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
static atomic_int g_left = -1; /* threads still allowed; -1: not armed */

void fail_threads_arm(int after) { atomic_store(&g_left, after); }

__attribute__((constructor)) static void ArmFromEnv(void) {
  const char* limit = getenv("FAIL_THREADS_AFTER");
  if (limit) fail_threads_arm(atoi(limit));
}

int pthread_create(pthread_t* t, const pthread_attr_t* attr, void* (*fn)(void*), void* arg) {
  CreateFn real = (CreateFn)dlsym(RTLD_NEXT, "pthread_create");
  if (!real) return EAGAIN;
  if (atomic_load(&g_left) >= 0 && atomic_fetch_sub(&g_left, 1) <= 0) return EAGAIN;
  return real(t, attr, fn, arg);
}
