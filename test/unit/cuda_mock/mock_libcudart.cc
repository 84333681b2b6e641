// A stand-in for the CUDA runtime (built as libcudart.so.13, its symbols in the version node
// libcudart.so.13 as in NVIDIA's) that runs on the CPU, so the cublas and cudnn plugins' runtime
// libraries can be tested without a GPU (plugin_standin_test.cc). It sits on the driver as the
// real one does: cudaMalloc / cudaFree are the driver stand-in's cuMemAlloc / cuMemFree
// (mock_libcuda.cc, dlopen()ed as libcuda.so.1), so device memory is host memory that the driver
// tracks, and memory the CUDA device API allocated (AllocData) is device memory here too. Every
// copy checks its device side lies inside a live device block (and its host side does not):
// otherwise it fails with cudaErrorInvalidValue and records a violation. Copies count their
// bytes per direction. A stream is a queue that runs only at cudaStreamSynchronize (asynchronous
// copies from the host take the source at the call, as pageable copies do), so work that the
// caller does not wait for shows as missing results. The cuBLAS and cuDNN stand-ins queue their
// work here and record their counters and violations here (mock_standin.h). Only what
// backends/plugins/{cublas,cudnn}/runtime/*.cc call is here, with the CUDA headers' signatures.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "mock_standin.h"

struct CUstream_st {
  std::deque<std::pair<void (*)(void*), void*>> work;
};

namespace {

// The driver stand-in's functions (mock_libcuda.cc).
struct Driver {
  int (*cuInit)(unsigned) = nullptr;
  int (*cuDeviceGetCount)(int*) = nullptr;
  int (*cuMemAlloc_v2)(unsigned long long*, size_t) = nullptr;     // NOLINT(runtime/int)
  int (*cuMemFree_v2)(unsigned long long) = nullptr;               // NOLINT(runtime/int)
  int (*mock_cuda_is_live)(unsigned long long, size_t) = nullptr;  // NOLINT(runtime/int)
};

template <typename F>
bool Sym(void* lib, const char* name, F* f) {
  *f = reinterpret_cast<F>(dlsym(lib, name));
  return *f != nullptr;
}

// Null when libcuda.so.1 is missing or is not the stand-in (the real driver has no
// mock_cuda_is_live): then there is no device.
const Driver* GetDriver() {
  static const Driver* driver = []() -> const Driver* {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    static Driver d;
    if (!lib || !Sym(lib, "cuInit", &d.cuInit) ||
        !Sym(lib, "cuDeviceGetCount", &d.cuDeviceGetCount) ||
        !Sym(lib, "cuMemAlloc_v2", &d.cuMemAlloc_v2) ||
        !Sym(lib, "cuMemFree_v2", &d.cuMemFree_v2) ||
        !Sym(lib, "mock_cuda_is_live", &d.mock_cuda_is_live) || d.cuInit(0) != 0)
      return nullptr;
    return &d;
  }();
  return driver;
}

std::mutex mu;  // guards everything below
CUstream_st default_stream;
std::set<CUstream_st*> streams;
std::map<std::string, int64_t> counters;
std::string last_violation;
thread_local int current_device = 0;

CUstream_st* StreamOf(cudaStream_t s) { return s ? s : &default_stream; }

void Count(const char* name, int64_t n) {
  std::lock_guard<std::mutex> lock(mu);
  counters[name] += n;
}

// Runs a stream's queue in order (work queued while it runs runs too).
void Drain(CUstream_st* s) {
  for (;;) {
    std::pair<void (*)(void*), void*> item;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (s->work.empty()) return;
      item = s->work.front();
      s->work.pop_front();
    }
    item.first(item.second);
  }
}

void DrainAll() {
  std::set<CUstream_st*> all;
  {
    std::lock_guard<std::mutex> lock(mu);
    all = streams;
  }
  Drain(&default_stream);
  for (CUstream_st* s : all) Drain(s);
}

bool IsDevice(const void* p, size_t bytes) {
  const Driver* d = GetDriver();
  return d && p && d->mock_cuda_is_live(reinterpret_cast<uintptr_t>(p), bytes ? bytes : 1) != 0;
}

std::string Hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%p", p);
  return buf;
}

// Checks the two sides of a copy of `bytes` (the whole extent each side touches) for `kind`;
// counts the bytes, or records a violation and returns false.
bool CheckCopy(const char* call, void* dst, size_t dst_extent, const void* src, size_t src_extent,
               cudaMemcpyKind kind, size_t bytes) {
  const bool dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  const bool src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if (!dst_dev && !src_dev && kind != cudaMemcpyHostToHost) {
    mock_cudart_violation(
        (std::string(call) + ": unsupported copy kind " + std::to_string(static_cast<int>(kind)))
            .c_str());
    return false;
  }
  auto side = [&](const char* what, const void* p, size_t extent, bool device) {
    if (IsDevice(p, extent) == device) return true;
    mock_cudart_violation((std::string(call) + ": " + what + " (" + Hex(p) + ", " +
                           std::to_string(extent) + " bytes) is " +
                           (device ? "not inside device memory" : "device memory, not host"))
                              .c_str());
    return false;
  };
  if (bytes == 0) return true;
  if (!side("the destination", dst, dst_extent, dst_dev) ||
      !side("the source", src, src_extent, src_dev))
    return false;
  Count(kind == cudaMemcpyHostToDevice     ? "h2d_bytes"
        : kind == cudaMemcpyDeviceToHost   ? "d2h_bytes"
        : kind == cudaMemcpyDeviceToDevice ? "d2d_bytes"
                                           : "h2h_bytes",
        static_cast<int64_t>(bytes));
  return true;
}

}  // namespace

extern "C" {

int mock_cudart_is_device(const void* p, size_t bytes) { return IsDevice(p, bytes) ? 1 : 0; }

int mock_cudart_check_device(const char* call, const char* what, const void* p, size_t bytes) {
  if (IsDevice(p, bytes)) return 1;
  mock_cudart_violation((std::string(call) + ": " + what + " (" + Hex(p) + ", " +
                         std::to_string(bytes) + " bytes) is not inside device memory")
                            .c_str());
  return 0;
}

void mock_cudart_violation(const char* message) {
  std::lock_guard<std::mutex> lock(mu);
  counters["violations"] += 1;
  last_violation = message;
}

void mock_cudart_enqueue(void* stream, void (*run)(void*), void* ctx) {
  std::lock_guard<std::mutex> lock(mu);
  StreamOf(static_cast<cudaStream_t>(stream))->work.emplace_back(run, ctx);
}

void mock_cudart_count(const char* name, int64_t n) { Count(name, n); }

int64_t mock_cudart_counter(const char* name) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = counters.find(name);
  return it == counters.end() ? 0 : it->second;
}

const char* mock_cudart_last_violation(void) {
  std::lock_guard<std::mutex> lock(mu);
  return last_violation.c_str();
}

void mock_cudart_reset(void) {
  std::lock_guard<std::mutex> lock(mu);
  counters.clear();
  last_violation.clear();
}

const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
    case cudaSuccess:
      return "cudaSuccess";
    case cudaErrorInvalidValue:
      return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation:
      return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidMemcpyDirection:
      return "cudaErrorInvalidMemcpyDirection";
    case cudaErrorNoDevice:
      return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice:
      return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle:
      return "cudaErrorInvalidResourceHandle";
    default:
      return "cudaErrorUnknown";
  }
}

const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess:
      return "no error";
    case cudaErrorInvalidValue:
      return "invalid argument";
    case cudaErrorNoDevice:
      return "no CUDA-capable device is detected (the libcuda.so.1 stand-in is not loaded)";
    default:
      return "error in the CUDA runtime stand-in";
  }
}

cudaError_t cudaGetDeviceCount(int* count) {
  const Driver* d = GetDriver();
  if (!d) return *count = 0, cudaErrorNoDevice;
  return d->cuDeviceGetCount(count) == 0 ? cudaSuccess : cudaErrorNoDevice;
}

cudaError_t cudaGetDevice(int* device) { return *device = current_device, cudaSuccess; }

cudaError_t cudaSetDevice(int device) {
  int count = 0;
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) return e;
  if (device < 0 || device >= count) return cudaErrorInvalidDevice;
  current_device = device;
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int) {
  auto* s = new CUstream_st;
  std::lock_guard<std::mutex> lock(mu);
  streams.insert(s);
  *stream = s;
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (stream && !streams.count(stream)) return cudaErrorInvalidResourceHandle;
  }
  Drain(StreamOf(stream));
  return cudaSuccess;
}

cudaError_t cudaMalloc(void** p, size_t bytes) {
  const Driver* d = GetDriver();
  if (!d) return cudaErrorNoDevice;
  unsigned long long addr = 0;  // NOLINT(runtime/int)
  if (d->cuMemAlloc_v2(&addr, bytes) != 0) return cudaErrorMemoryAllocation;
  *p = reinterpret_cast<void*>(static_cast<uintptr_t>(addr));
  Count("cudaMalloc", 1);
  return cudaSuccess;
}

// Waits for every stream first, as cudaFree synchronizes the device (the driver stand-in
// poisons freed memory, so queued work on it would show).
cudaError_t cudaFree(void* p) {
  if (!p) return cudaSuccess;
  const Driver* d = GetDriver();
  if (!d) return cudaErrorNoDevice;
  DrainAll();
  return d->cuMemFree_v2(reinterpret_cast<uintptr_t>(p)) == 0 ? cudaSuccess : cudaErrorInvalidValue;
}

// Synchronous: copies at once (it does not wait for non-blocking streams, as with the real one).
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  if (!CheckCopy("cudaMemcpy", dst, bytes, src, bytes, kind, bytes)) return cudaErrorInvalidValue;
  if (bytes) std::memmove(dst, src, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  if (!CheckCopy("cudaMemcpyAsync", dst, bytes, src, bytes, kind, bytes))
    return cudaErrorInvalidValue;
  if (bytes == 0) return cudaSuccess;
  if (kind == cudaMemcpyHostToDevice) {
    std::string taken(static_cast<const char*>(src), bytes);
    mock_standin::Enqueue(stream, [dst, taken] { std::memcpy(dst, taken.data(), taken.size()); });
  } else {
    mock_standin::Enqueue(stream, [dst, src, bytes] { std::memmove(dst, src, bytes); });
  }
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t stream) {
  if (bytes && !mock_cudart_check_device("cudaMemsetAsync", "the destination", p, bytes))
    return cudaErrorInvalidValue;
  Count("memset_bytes", static_cast<int64_t>(bytes));
  mock_standin::Enqueue(stream, [p, value, bytes] { std::memset(p, value, bytes); });
  return cudaSuccess;
}

// Linear memory only (no arrays): `depth` slices of `height` rows of `width` bytes, each side at
// its position in its pitched pointer (slice pitch = pitch * ysize).
cudaError_t cudaMemcpy3DAsync(const cudaMemcpy3DParms* p, cudaStream_t stream) {
  if (!p || p->srcArray || p->dstArray) return cudaErrorInvalidValue;
  const size_t w = p->extent.width, h = p->extent.height, d = p->extent.depth;
  if (w == 0 || h == 0 || d == 0) return cudaSuccess;
  if (w > p->srcPtr.pitch || w > p->dstPtr.pitch) return cudaErrorInvalidValue;
  auto offset = [&](const cudaPitchedPtr& ptr, const cudaPos& pos, size_t z, size_t y) {
    return (pos.z + z) * ptr.pitch * ptr.ysize + (pos.y + y) * ptr.pitch + pos.x;
  };
  char* dst = static_cast<char*>(p->dstPtr.ptr);
  const char* src = static_cast<const char*>(p->srcPtr.ptr);
  const size_t dst_begin = offset(p->dstPtr, p->dstPos, 0, 0),
               src_begin = offset(p->srcPtr, p->srcPos, 0, 0);
  if (!CheckCopy("cudaMemcpy3DAsync", dst + dst_begin,
                 offset(p->dstPtr, p->dstPos, d - 1, h - 1) + w - dst_begin, src + src_begin,
                 offset(p->srcPtr, p->srcPos, d - 1, h - 1) + w - src_begin, p->kind, w * h * d))
    return cudaErrorInvalidValue;
  // The rows, in order; a host source is taken at the call.
  std::string taken;
  if (p->kind == cudaMemcpyHostToDevice)
    for (size_t z = 0; z < d; ++z)
      for (size_t y = 0; y < h; ++y) taken.append(src + offset(p->srcPtr, p->srcPos, z, y), w);
  const cudaMemcpy3DParms params = *p;
  mock_standin::Enqueue(stream, [params, taken, offset, dst, src, w, h, d] {
    size_t row = 0;
    for (size_t z = 0; z < d; ++z)
      for (size_t y = 0; y < h; ++y, ++row) {
        const char* from =
            taken.empty() ? src + offset(params.srcPtr, params.srcPos, z, y) : &taken[row * w];
        std::memmove(dst + offset(params.dstPtr, params.dstPos, z, y), from, w);
      }
  });
  return cudaSuccess;
}

}  // extern "C"
