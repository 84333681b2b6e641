// A stand-in for the NVIDIA driver library (built as libcuda.so.1) that runs the CUDA device
// API's logic on the CPU: device and managed memory are host memory, and a stream is a queue
// that runs only when synchronized, so a launch that should have waited but did not shows as
// missing results. Streams are independent: synchronizing one runs its queue only, and
// destroying one drops the work it still holds (so a stream freed without a wait shows as
// missing results too); a destroyed stream is an invalid handle (CUDA_ERROR_INVALID_HANDLE).
// Kernels are C++ functions chosen by name (any "binary" loads):
//   add_scale(A read, B write, n): B[i] = A[i] * 2 + 1 for i < n
//   trap(...): fails the stream (CUDA_ERROR_LAUNCH_FAILED at the next synchronize)
// Each launch takes 1 ms of "kernel time" between its events. Allocations are tracked: one of
// 0 bytes fails as with the real driver, and a freed block is filled with 0xff bytes (NaN
// floats) and never handed out again, so a kernel or copy that runs after its memory was freed
// reads NaN instead of stale data, and freeing it twice fails. Only what
// backends/cuda/runtime/cuda_device_api.cc (cuda_driver.h) calls is here, with the driver API's
// signatures, plus mock_cuda_is_live for the other stand-ins (mock_standin.h).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace {

using CUresult = int;
constexpr CUresult kOk = 0, kInvalidValue = 1, kInvalidHandle = 400, kNotReady = 600,
                   kNotFound = 500, kLaunchFailed = 719;

struct Stream {
  std::deque<std::function<void()>> work;
  bool failed = false;
};
struct Event {
  double at = -1;  // the stream's clock when it ran; -1 before
};
struct Func {
  std::string name;
};

std::mutex mu;
Stream default_stream;
std::set<Stream*> live_streams;           // from cuStreamCreate, not yet destroyed
std::map<uintptr_t, size_t> live_blocks;  // address -> bytes of each block not yet freed
std::vector<void*> freed_blocks;          // poisoned, kept (still reachable: no leak reports)
double clock_ms = 0;                      // advanced 1 ms per kernel run

// The stream `s` names (null: the legacy default stream), or null for one not live.
Stream* S(void* s) {
  if (!s) return &default_stream;
  auto* st = static_cast<Stream*>(s);
  return live_streams.count(st) ? st : nullptr;
}

void Drain(Stream* s) {
  while (!s->work.empty()) {
    auto f = std::move(s->work.front());
    s->work.pop_front();
    f();
  }
}

}  // namespace

extern "C" {

CUresult cuInit(unsigned) { return kOk; }
CUresult cuDeviceGetCount(int* n) { return *n = 1, kOk; }
CUresult cuDeviceGet(int* d, int ordinal) { return ordinal == 0 ? (*d = 0, kOk) : kInvalidValue; }
CUresult cuDeviceGetAttribute(int* v, int attr, int) {
  const char* concurrent = std::getenv("MOCK_CUDA_CONCURRENT_MANAGED");
  if (attr == 83) return *v = 1, kOk;  // MANAGED_MEMORY
  if (attr == 89) return *v = !(concurrent && std::string(concurrent) == "0"), kOk;
  return *v = 0, kOk;
}
CUresult cuDevicePrimaryCtxRetain(void** ctx, int) {
  static int c;
  return *ctx = &c, kOk;
}
CUresult cuCtxSetCurrent(void*) { return kOk; }
CUresult cuModuleLoadData(void** m, const void*) {
  static int mod;
  return *m = &mod, kOk;
}
CUresult cuModuleUnload(void*) { return kOk; }
CUresult cuModuleGetFunction(void** f, void*, const char* name) {
  std::string n = name;
  if (n != "add_scale" && n != "trap") return kNotFound;
  *f = new Func{n};
  return kOk;
}
CUresult cuMemAlloc_v2(unsigned long long* p, size_t n) {  // NOLINT(runtime/int)
  if (n == 0) return kInvalidValue;
  void* block = std::aligned_alloc(256, (n + 255) / 256 * 256);
  std::lock_guard<std::mutex> lock(mu);
  live_blocks[reinterpret_cast<uintptr_t>(block)] = n;
  *p = reinterpret_cast<uintptr_t>(block);
  return kOk;
}
CUresult cuMemAllocManaged(unsigned long long* p, size_t n, unsigned) {  // NOLINT(runtime/int)
  return cuMemAlloc_v2(p, n);
}
// Poisoned and kept (never reused): see the top of the file.
CUresult cuMemFree_v2(unsigned long long p) {  // NOLINT(runtime/int)
  std::lock_guard<std::mutex> lock(mu);
  auto it = live_blocks.find(static_cast<uintptr_t>(p));
  if (it == live_blocks.end()) return kInvalidValue;
  std::memset(reinterpret_cast<void*>(it->first), 0xff, it->second);
  freed_blocks.push_back(reinterpret_cast<void*>(it->first));
  live_blocks.erase(it);
  return kOk;
}
CUresult cuMemcpyHtoD_v2(unsigned long long d, const void* h, size_t n) {  // NOLINT
  std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(d)), h, n);
  return kOk;
}
// Synchronous copies do not wait for a non-blocking stream (as with the real driver).
CUresult cuMemcpyDtoH_v2(void* h, unsigned long long d, size_t n) {  // NOLINT
  std::memcpy(h, reinterpret_cast<const void*>(static_cast<uintptr_t>(d)), n);
  return kOk;
}
// Written to the host when the stream runs.
CUresult cuMemcpyDtoHAsync_v2(void* h, unsigned long long d, size_t n, void* s) {  // NOLINT
  std::lock_guard<std::mutex> lock(mu);
  if (!S(s)) return kInvalidHandle;
  S(s)->work.push_back(
      [h, d, n] { std::memcpy(h, reinterpret_cast<const void*>(static_cast<uintptr_t>(d)), n); });
  return kOk;
}
// Pageable source: copied out at the call, written to the device when the stream runs.
CUresult cuMemcpyHtoDAsync_v2(unsigned long long d, const void* h, size_t n,  // NOLINT
                              void* s) {
  std::string bytes(static_cast<const char*>(h), n);
  std::lock_guard<std::mutex> lock(mu);
  if (!S(s)) return kInvalidHandle;
  S(s)->work.push_back([d, bytes] {
    std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(d)), bytes.data(), bytes.size());
  });
  return kOk;
}
// Copied when the stream runs (overlapping ranges as memmove).
CUresult cuMemcpyDtoDAsync_v2(unsigned long long d, unsigned long long src,  // NOLINT
                              size_t n, void* s) {
  std::lock_guard<std::mutex> lock(mu);
  if (!S(s)) return kInvalidHandle;
  S(s)->work.push_back([d, src, n] {
    std::memmove(reinterpret_cast<void*>(static_cast<uintptr_t>(d)),
                 reinterpret_cast<const void*>(static_cast<uintptr_t>(src)), n);
  });
  return kOk;
}
CUresult cuStreamCreate(void** s, unsigned) {
  auto* st = new Stream;
  std::lock_guard<std::mutex> lock(mu);
  live_streams.insert(st);
  return *s = st, kOk;
}
// Drops the work still queued (the real driver would finish it; dropping it shows a missing
// wait as missing results).
CUresult cuStreamDestroy_v2(void* s) {
  std::lock_guard<std::mutex> lock(mu);
  Stream* st = s ? S(s) : nullptr;
  if (!st) return kInvalidHandle;
  live_streams.erase(st);
  delete st;
  return kOk;
}
CUresult cuStreamSynchronize(void* s) {
  std::lock_guard<std::mutex> lock(mu);
  if (!S(s)) return kInvalidHandle;
  Drain(S(s));
  bool failed = S(s)->failed;
  S(s)->failed = false;
  return failed ? kLaunchFailed : kOk;
}
CUresult cuLaunchKernel(void* f, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, void* s, void** params, void**) {
  const std::string name = static_cast<Func*>(f)->name;
  std::lock_guard<std::mutex> lock(mu);
  Stream* st = S(s);
  if (!st) return kInvalidHandle;
  if (name == "trap") {
    st->work.push_back([st] { st->failed = true; });
    return kOk;
  }
  auto* a = reinterpret_cast<const float*>(
      static_cast<uintptr_t>(*static_cast<unsigned long long*>(params[0])));  // NOLINT
  auto* b = reinterpret_cast<float*>(
      static_cast<uintptr_t>(*static_cast<unsigned long long*>(params[1])));  // NOLINT
  const int64_t n = *static_cast<int64_t*>(params[2]);
  st->work.push_back([a, b, n] {
    for (int64_t i = 0; i < n; ++i) b[i] = a[i] * 2 + 1;
    clock_ms += 1;
  });
  return kOk;
}
CUresult cuEventCreate(void** e, unsigned) { return *e = new Event, kOk; }
CUresult cuEventDestroy_v2(void* e) {
  delete static_cast<Event*>(e);
  return kOk;
}
CUresult cuEventRecord(void* e, void* s) {
  auto* ev = static_cast<Event*>(e);
  std::lock_guard<std::mutex> lock(mu);
  if (!S(s)) return kInvalidHandle;
  ev->at = -1;
  S(s)->work.push_back([ev] { ev->at = clock_ms; });
  return kOk;
}
CUresult cuEventElapsedTime(float* ms, void* start, void* stop) {
  auto *a = static_cast<Event*>(start), *b = static_cast<Event*>(stop);
  if (a->at < 0 || b->at < 0) return kNotReady;
  return *ms = static_cast<float>(b->at - a->at), kOk;
}
// Not a driver function: the cudart stand-in's (mock_libcudart.cc) test of device memory. 1 when
// [p, p + n) lies inside one live block (cuMemAlloc or cuMemAllocManaged, not yet freed).
int mock_cuda_is_live(unsigned long long p, size_t n) {  // NOLINT(runtime/int)
  std::lock_guard<std::mutex> lock(mu);
  auto it = live_blocks.upper_bound(static_cast<uintptr_t>(p));
  if (it == live_blocks.begin()) return 0;
  --it;
  return p + n <= it->first + it->second ? 1 : 0;
}
CUresult cuGetErrorName(CUresult r, const char** name) {
  switch (r) {
    case kLaunchFailed:
      return *name = "CUDA_ERROR_LAUNCH_FAILED", kOk;
    case kNotFound:
      return *name = "CUDA_ERROR_NOT_FOUND", kOk;
    case kNotReady:
      return *name = "CUDA_ERROR_NOT_READY", kOk;
    case kInvalidHandle:
      return *name = "CUDA_ERROR_INVALID_HANDLE", kOk;
    default:
      return kInvalidValue;
  }
}

}  // extern "C"
