// Helpers of the unit tests that compile text PrimFuncs to a kernel library and call its packed
// entry points (dlopen), as the VM would.
#ifndef RELAX_TEST_UNIT_KERNEL_TEST_UTIL_H_
#define RELAX_TEST_UNIT_KERNEL_TEST_UTIL_H_

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "relax/codegen/codegen.h"
#include "relax/lower/flatten_buffer.h"
#include "relax/parser/parser.h"
#include "relax/runtime/c_api.h"

namespace relax::testing {

inline IRModule Parse(const std::string& text) {
  IRModule mod = ParseModule(text, "<test>");
  FlattenModuleBuffers(&mod);
  return mod;
}

inline std::string MlirOf(const std::string& text) {
  std::ostringstream os;
  CodegenOptions opts;
  opts.dump_mlir = &os;
  BuildSharedObject(Parse(text), Target::Parse("cpu"), opts);
  return os.str();
}

inline size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// A compiled kernel library; the runtime C API it calls resolves against this binary.
class Kernels {
 public:
  explicit Kernels(const std::string& text) {
    // Keep the runtime's C API linked into the test binary (kernels call it).
    static void* const anchor[] = {reinterpret_cast<void*>(&RelaxParallelFor),
                                   reinterpret_cast<void*>(&RelaxSetLastError),
                                   reinterpret_cast<void*>(&RelaxCheckKernelArgs)};
    (void)anchor;
    std::string so = BuildSharedObject(Parse(text), Target::Parse("cpu"), CodegenOptions{});
    path_ = ::testing::TempDir() + "/relax_tir_codegen_" + std::to_string(++counter_) + ".so";
    std::ofstream(path_, std::ios::binary)
        .write(so.data(), static_cast<std::streamsize>(so.size()));
    handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
    EXPECT_NE(handle_, nullptr) << dlerror();
    if (handle_) {
      auto init = reinterpret_cast<RelaxInitFunc>(dlsym(handle_, "__relax_init"));
      EXPECT_NE(init, nullptr);
      if (init) EXPECT_EQ(init(RelaxGetRuntimeTable()), 0);
    }
  }
  ~Kernels() {
    if (handle_) dlclose(handle_);
    std::remove(path_.c_str());
  }
  RelaxPackedFunc Get(const std::string& name) {
    return handle_ ? reinterpret_cast<RelaxPackedFunc>(dlsym(handle_, name.c_str())) : nullptr;
  }

 private:
  static inline int counter_ = 0;
  std::string path_;
  void* handle_ = nullptr;
};

// A 1-D CPU tensor over `data`.
struct Tensor1D {
  Tensor1D(void* data, int64_t n, DLDataType t) : shape(n) {
    dl.data = data;
    dl.device = {kDLCPU, 0};
    dl.ndim = 1;
    dl.dtype = t;
    dl.shape = &shape;
    dl.strides = nullptr;
    dl.byte_offset = 0;
  }
  // A copy points at its own shape (a std::vector built from a braced list copies).
  Tensor1D(const Tensor1D& o) : shape(o.shape), dl(o.dl) { dl.shape = &shape; }
  Tensor1D& operator=(const Tensor1D& o) {
    shape = o.shape;
    dl = o.dl;
    dl.shape = &shape;
    return *this;
  }
  int64_t shape;
  DLTensor dl;
};

inline RelaxValue TensorArg(Tensor1D* t) {
  RelaxValue v{};
  v.type_code = kRelaxTensor;
  v.v_handle = &t->dl;
  return v;
}
inline RelaxValue IntArg(int64_t x) {
  RelaxValue v{};
  v.type_code = kRelaxInt;
  v.v_int64 = x;
  return v;
}

constexpr DLDataType kI64 = {kDLInt, 64, 1};
constexpr DLDataType kF32 = {kDLFloat, 32, 1};

}  // namespace relax::testing

#endif  // RELAX_TEST_UNIT_KERNEL_TEST_UTIL_H_
