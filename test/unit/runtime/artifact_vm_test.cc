// End-to-end tests: a real kernel .so wrapped as an artifact, loaded, verified and run by the VM.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../error_of.h"
#include "relax/runtime/artifact.h"
#include "relax/runtime/cpu_features.h"
#include "relax/support/error.h"
#include "relax/vm/vm.h"

namespace relax::runtime {
namespace {

namespace fs = std::filesystem;

// Kernels in the RelaxPackedFunc ABI. Like generated kernels they reach the runtime only through
// the table the loader hands to __relax_init (no host-program symbols).
const char* kKernelSource = R"(
#include "relax/runtime/c_api.h"
static const RelaxRuntimeTable* g_rt;
#ifndef NO_INIT
int32_t __relax_init(const RelaxRuntimeTable* t) {
  if (!t || t->version != RELAX_RUNTIME_TABLE_VERSION) return 1;
  g_rt = t;
  return 0;
}
#endif
static void SetError(const char* msg) { g_rt->set_last_error(msg); }
static int64_t Numel(const DLTensor* t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}
int32_t add_one(const RelaxValue* args, int32_t n, RelaxValue* ret) {
  if (n != 2 || args[0].type_code != kRelaxTensor || args[1].type_code != kRelaxTensor) {
    SetError("add_one: expected 2 tensors");
    return 1;
  }
  const DLTensor* x = (const DLTensor*)args[0].v_handle;
  DLTensor* y = (DLTensor*)args[1].v_handle;
  const float* a = (const float*)((const char*)x->data + x->byte_offset);
  float* b = (float*)((char*)y->data + y->byte_offset);
  int64_t cnt = Numel(x);
  if (Numel(y) != cnt) {
    SetError("add_one: size mismatch");
    return 2;
  }
#ifndef ADD_VALUE
#define ADD_VALUE 1.0f
#endif
  for (int64_t i = 0; i < cnt; ++i) b[i] = a[i] + ADD_VALUE;
  ret->type_code = kRelaxNull;
  return 0;
}
int32_t always_fail(const RelaxValue* args, int32_t n, RelaxValue* ret) {
  SetError("deliberate failure");
  return 3;
}
)";

Arg R(int64_t r) { return {Arg::kReg, r}; }
Arg C(int64_t c) { return {Arg::kConst, c}; }
Arg I(int64_t v) { return {Arg::kImm, v}; }
Instruction Call(const std::string& f, std::vector<Arg> args, int64_t dst = -1) {
  Instruction in;
  in.op = Instruction::kCall;
  in.func = f;
  in.args = std::move(args);
  in.dst = dst;
  return in;
}
Instruction Ret(int64_t reg) {
  Instruction in;
  in.op = Instruction::kRet;
  in.reg = reg;
  return in;
}
Constant Str(const std::string& s) {
  Constant c;
  c.kind = Constant::kString;
  c.str = s;
  return c;
}
Constant ShapeC(std::vector<int64_t> v) {
  Constant c;
  c.kind = Constant::kShape;
  c.shape = std::move(v);
  return c;
}

// main(x: float32[n]) -> (x + 1, W + 1) where W is a float32[4] param constant.
Executable AddOneExecutable(const std::string& kernel = "add_one") {
  Executable e;
  e.constants = {Str("float32"),         // 0
                 Str("input 'x'"),       // 1
                 ShapeC({1, 0}),         // 2: match pattern: dim0 -> heap[0]
                 Str("n"),               // 3
                 ShapeC({1, 1, 1, 0}),   // 4: make_shape program: [heap[0]]
                 Constant{},             // 5: tensor W (filled below)
                 ShapeC({1, 1, 0, 4})};  // 6: make_shape program: [4]
  Constant& w = e.constants[5];
  w.kind = Constant::kTensor;
  w.str = "float32";
  w.shape = {4};
  w.params_offset = 64;
  w.nbytes = 16;
  Function m;
  m.name = "main";
  m.param_names = {"x"};
  m.num_regs = 8;
  m.code = {Call("vm.builtin.check_tensor", {R(0), I(1), C(0), C(1)}),
            Call("vm.builtin.alloc_shape_heap", {I(1)}, 1),
            Call("vm.builtin.match_shape", {R(0), R(1), C(2), C(1), C(3)}),
            Call("vm.builtin.make_shape", {R(1), C(4)}, 2),
            Call("vm.builtin.alloc_tensor", {R(2), C(0)}, 3),
            Call(kernel, {R(0), R(3)}),
            Call("helper", {C(5), C(6)}, 4),
            Call("vm.builtin.make_tuple", {R(3), R(4)}, 5),
            Ret(5)};
  // helper(t, shape_prog): allocate and add one into a fresh tensor (tests VM-to-VM calls).
  Function h;
  h.name = "helper";
  h.param_names = {"t", "prog"};
  h.num_regs = 5;
  h.code = {Call("vm.builtin.alloc_shape_heap", {I(0)}, 2),
            Call("vm.builtin.make_shape", {R(2), R(1)}, 3),
            Call("vm.builtin.alloc_tensor", {R(3), C(0)}, 4), Call("add_one", {R(0), R(4)}),
            Ret(4)};
  e.functions = {m, h};
  e.inputs = {{"x", "float32", {{"n", -1}}}};
  e.outputs = {{"y", "float32", {{"n", -1}}}, {"w1", "float32", {{"", 4}}}};
  return e;
}

std::string Params() {
  std::string p(128, '\0');
  float w[4] = {10, 20, 30, 40};
  std::memcpy(&p[64], w, sizeof(w));
  return p;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

using relax::test::ErrorOf;

class ArtifactTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() /
                        ("relax_artifact_test_" + std::to_string(::getpid())));
    fs::create_directories(*dir_);
    if (std::system("cc --version > /dev/null 2>&1") != 0) return;
    fs::path include = fs::path(RELAX_SOURCE_DIR) / "include";
    std::string src = (*dir_ / "kernels.c").string();
    WriteFile(src, kKernelSource);
    std::string so = (*dir_ / "kernels.so").string();
    std::string cmd =
        "cc -shared -fPIC -O1 -I'" + include.string() + "' -o '" + so + "' '" + src + "'";
    if (std::system(cmd.c_str()) == 0) elf_ = new std::string(ReadFile(so));
    // The same kernels adding 2 instead of 1 (for the reload test).
    std::string so2 = (*dir_ / "kernels2.so").string();
    std::string cmd2 = "cc -shared -fPIC -O1 -DADD_VALUE=2.0f -I'" + include.string() + "' -o '" +
                       so2 + "' '" + src + "'";
    if (std::system(cmd2.c_str()) == 0) elf2_ = new std::string(ReadFile(so2));
    // Without __relax_init (an ELF not built by relaxc): the loader must refuse it.
    std::string so3 = (*dir_ / "kernels_noinit.so").string();
    std::string cmd3 = "cc -shared -fPIC -O1 -DNO_INIT -I'" + include.string() + "' -o '" + so3 +
                       "' '" + src + "'";
    if (std::system(cmd3.c_str()) == 0) elf_noinit_ = new std::string(ReadFile(so3));
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
    delete elf_;
    elf_ = nullptr;
    delete elf2_;
    elf2_ = nullptr;
    delete elf_noinit_;
    elf_noinit_ = nullptr;
  }
  void SetUp() override {
    if (std::system("cc --version > /dev/null 2>&1") != 0)
      GTEST_SKIP() << "no C compiler (cc) available to build the test kernel";
    ASSERT_NE(elf_, nullptr) << "the test kernel did not compile";
  }
  std::string Path(const std::string& name) { return (*dir_ / name).string(); }
  std::string WriteGood(const std::string& name, const Executable& e = AddOneExecutable()) {
    std::string path = Path(name);
    WriteArtifact(path, {*elf_, Params(), e.ToJSON()});
    return path;
  }
  static NDArray Iota(int64_t n) {
    NDArray a = NDArray::Empty({n}, ParseDType("float32"));
    for (int64_t i = 0; i < n; ++i) static_cast<float*>(a.data())[i] = static_cast<float>(i) * 0.5f;
    return a;
  }

  static fs::path* dir_;
  static std::string* elf_;
  static std::string* elf2_;
  static std::string* elf_noinit_;
};
fs::path* ArtifactTest::dir_ = nullptr;
std::string* ArtifactTest::elf_ = nullptr;
std::string* ArtifactTest::elf2_ = nullptr;
std::string* ArtifactTest::elf_noinit_ = nullptr;

// An artifact records the CPU features its code uses; a host without them refuses to load it
// (instead of dying of SIGILL in the first kernel). Unknown feature names are not checked.
TEST_F(ArtifactTest, CpuFeaturesAreCheckedAtLoad) {
  EXPECT_TRUE(MissingCpuFeatures("sse3,not-a-real-feature").empty() ||
              MissingCpuFeatures("sse3,not-a-real-feature") == std::vector<std::string>{"sse3"});
  // Features of other CPU families are checked too (a -mcpu=bdver4 artifact uses FMA4, a
  // -mcpu=diamondrapids one APX registers): no CPU the project runs on (Zen, Intel) has FMA4/XOP.
  EXPECT_EQ(MissingCpuFeatures("fma4,xop"), (std::vector<std::string>{"fma4", "xop"}));
  __builtin_cpu_init();
  const bool has512 = __builtin_cpu_supports("avx512f");
  EXPECT_EQ(MissingCpuFeatures("avx512f").empty(), has512);
  ArtifactParts parts{*elf_, Params(), AddOneExecutable().ToJSON(), {}};
  parts.extra.push_back({"target", "cpu_features=sse3,avx512f\n", 8});
  WriteArtifact(Path("v4.so"), parts);
  std::string msg = has512 ? "" : ErrorOf([&] { LoadedArtifact::Load(Path("v4.so")); });
  if (has512)
    EXPECT_NO_THROW(LoadedArtifact::Load(Path("v4.so")));
  else
    EXPECT_NE(msg.find("compiled for a CPU with avx512f, which this CPU lacks"), std::string::npos)
        << msg;
}

// The target section names the triple; another architecture's artifact is refused before any
// code is mapped, naming both triples. A section without the triple (older relaxc) still loads,
// and the ELF loader checks the machine of the code itself: a kernel library whose ELF header
// says AArch64 is refused even when the target section is silent.
TEST_F(ArtifactTest, ForeignTripleIsRefusedAtLoad) {
  const std::string other = std::string(RuntimeTriple()).rfind("x86_64", 0) == 0
                                ? "aarch64-unknown-linux-gnu"
                                : "x86_64-unknown-linux-gnu";
  ArtifactParts parts{*elf_, Params(), AddOneExecutable().ToJSON(), {}};
  parts.extra.push_back({"target", "cpu_features=\ntriple=" + other + "\n", 8});
  WriteArtifact(Path("foreign.so"), parts);
  std::string msg = ErrorOf([&] { LoadedArtifact::Load(Path("foreign.so")); });
  EXPECT_NE(msg.find("holds code for " + other + ", but this runtime runs on " +
                     std::string(RuntimeTriple())),
            std::string::npos)
      << msg;
  parts.extra[0].bytes = std::string("cpu_features=\ntriple=") + RuntimeTriple() + "\n";
  WriteArtifact(Path("own.so"), parts);
  EXPECT_NO_THROW(LoadedArtifact::Load(Path("own.so")));
  // The ELF header's machine, patched to the other architecture (e_machine at offset 18).
  ArtifactParts patched{*elf_, Params(), AddOneExecutable().ToJSON(), {}};
  const uint16_t machine = other.rfind("aarch64", 0) == 0 ? 183 /* EM_AARCH64 */ : 62;
  std::memcpy(&patched.elf[18], &machine, 2);
  WriteArtifact(Path("foreign_elf.so"), patched);
  msg = ErrorOf([&] { LoadedArtifact::Load(Path("foreign_elf.so")); });
  EXPECT_NE(msg.find("holds code for " + other), std::string::npos) << msg;
}

// Kernels get the runtime's functions only through __relax_init; a library without it is refused.
TEST_F(ArtifactTest, KernelLibraryWithoutInitIsRefused) {
  ASSERT_NE(elf_noinit_, nullptr);
  WriteArtifact(Path("noinit.so"), {*elf_noinit_, Params(), AddOneExecutable().ToJSON(), {}});
  std::string msg = ErrorOf([&] { LoadedArtifact::Load(Path("noinit.so")); });
  EXPECT_NE(msg.find("has no __relax_init"), std::string::npos) << msg;
}

// Recompiling to the same path and loading again in one process must run the new kernels
// (each load has its own dynamic-linker identity), while the first load keeps running the old.
TEST_F(ArtifactTest, ReloadAfterRecompileRunsNewKernels) {
  ASSERT_NE(elf2_, nullptr);
  std::string path = WriteGood("reload.so");
  auto first = LoadedArtifact::Load(path);
  VirtualMachine vm1(first);
  EXPECT_EQ(static_cast<float*>(vm1.Run({Iota(3)})[0].data())[2], 1.0f + 1.0f);
  WriteArtifact(path, {*elf2_, Params(), AddOneExecutable().ToJSON()});
  VirtualMachine vm2(LoadedArtifact::Load(path));
  EXPECT_EQ(static_cast<float*>(vm2.Run({Iota(3)})[0].data())[2], 1.0f + 2.0f);
  EXPECT_EQ(static_cast<float*>(vm1.Run({Iota(3)})[0].data())[2], 1.0f + 1.0f);
}

TEST_F(ArtifactTest, RoundTripAndRun) {
  std::string path = WriteGood("good.so");
  EXPECT_EQ(fs::file_size(path) % 1, 0u);
  auto art = LoadedArtifact::Load(path);
  EXPECT_EQ(art->exec().entry, "main");
  const NDArray& w = art->constant_tensors()[5];
  ASSERT_TRUE(w.defined());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w.data()) % 64, 0u);
  EXPECT_EQ(static_cast<const float*>(w.data())[3], 40.0f);
  EXPECT_NE(art->GetKernel("add_one"), nullptr);
  EXPECT_NE(ErrorOf([&] { art->GetKernel("no_such_kernel"); }).find("no_such_kernel"),
            std::string::npos);

  VirtualMachine vm(art);
  for (int64_t n : {3, 7}) {
    std::vector<NDArray> out = vm.Run({Iota(n)});
    ASSERT_EQ(out.size(), 2u);
    ASSERT_EQ(out[0].shape(), std::vector<int64_t>{n});
    for (int64_t i = 0; i < n; ++i)
      EXPECT_EQ(static_cast<float*>(out[0].data())[i], static_cast<float>(i) * 0.5f + 1.0f);
    ASSERT_EQ(out[1].shape(), std::vector<int64_t>{4});
    EXPECT_EQ(static_cast<float*>(out[1].data())[0], 11.0f);
    EXPECT_EQ(static_cast<float*>(out[1].data())[3], 41.0f);
  }
  // The artifact is a plain loadable .so too.
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  EXPECT_NE(dlsym(h, "add_one"), nullptr);
  dlclose(h);
}

TEST_F(ArtifactTest, InputChecks) {
  Executable e = AddOneExecutable();
  e.inputs = {{"x", "float32", {{"batch", -1}, {"", 3}}}, {"y", "float32", {{"batch", -1}}}};
  e.functions[0].param_names = {"x", "y"};
  VirtualMachine vm(LoadedArtifact::Load(WriteGood("sig.so", e)));
  NDArray x43 = NDArray::Empty({4, 3}, ParseDType("float32"));
  NDArray y4 = NDArray::Empty({4}, ParseDType("float32"));
  EXPECT_EQ(ErrorOf([&] { vm.Run({x43}); }), "expected 2 inputs (x, y), got 1");
  EXPECT_EQ(ErrorOf([&] {
              vm.Run({NDArray::Empty({4, 3}, ParseDType("int64")), y4});
            }),
            "input 'x': expected dtype float32, got int64");
  EXPECT_EQ(ErrorOf([&] {
              vm.Run({NDArray::Empty({4}, ParseDType("float32")), y4});
            }),
            "input 'x': expected 2 dims, got 1");
  EXPECT_EQ(ErrorOf([&] {
              vm.Run({NDArray::Empty({4, 4}, ParseDType("float32")), y4});
            }),
            "input 'x': dim 1 must be 3, got 4");
  EXPECT_EQ(ErrorOf([&] {
              vm.Run({x43, NDArray::Empty({5}, ParseDType("float32"))});
            }),
            "input 'y': dim 0 (batch) is 5 but 'x' gave batch = 4");

  VirtualMachine vm1(LoadedArtifact::Load(WriteGood("sig1.so")));
  EXPECT_EQ(ErrorOf([&] { vm1.Run({Iota(2), Iota(2)}); }), "expected 1 input (x), got 2");
}

TEST_F(ArtifactTest, BytecodeChecksAreCleanErrors) {
  // Signature says nothing; the generated match_shape/check_tensor must report instead.
  Executable e = AddOneExecutable();
  e.inputs = {{"x", "float32", {{"n", -1}}}};
  e.functions[0].code[2] = Call("vm.builtin.match_shape", {R(0), R(1), C(6), C(1), C(3)});
  e.constants[6] = ShapeC({0, 5});              // dim0 must be 5
  e.constants.push_back(ShapeC({1, 1, 0, 4}));  // 7
  e.constants.push_back(ShapeC({1, 1, 0, 5}));  // 8
  e.functions[0].code[3] = Call("vm.builtin.make_shape", {R(1), C(8)}, 2);
  e.functions[0].code[6] = Call("helper", {C(5), C(7)}, 4);
  VirtualMachine vm(LoadedArtifact::Load(WriteGood("bc.so", e)));
  EXPECT_EQ(ErrorOf([&] { vm.Run({Iota(3)}); }), "input 'x': dim 0 (n) must be 5, got 3");
  EXPECT_EQ(vm.Run({Iota(5)}).size(), 2u);
}

// A well-formed program that never terminates (an edited loop bound, issue 7) ends with a clean
// error under an instruction limit; the count restarts with every call.
TEST_F(ArtifactTest, InstructionLimitStopsEndlessLoop) {
  Executable e = AddOneExecutable();
  Function spin;
  spin.name = "spin";
  spin.num_regs = 1;
  Instruction loop;
  loop.op = Instruction::kGoto;
  loop.offset = 0;
  spin.code = {loop};
  e.functions.push_back(spin);
  VirtualMachine vm(LoadedArtifact::Load(WriteGood("spin.so", e)));
  vm.set_max_instructions(1000);
  EXPECT_EQ(ErrorOf([&] { vm.Invoke("spin", {}); }),
            "function 'spin': instruction limit 1000 exceeded");
  EXPECT_EQ(vm.Run({Iota(4)}).size(), 2u);
  EXPECT_EQ(vm.Run({Iota(4)}).size(), 2u);
}

TEST_F(ArtifactTest, KernelFailureAndUnknownCallee) {
  VirtualMachine vm(LoadedArtifact::Load(WriteGood("fail.so", AddOneExecutable("always_fail"))));
  std::string msg = ErrorOf([&] { vm.Run({Iota(3)}); });
  EXPECT_NE(msg.find("kernel 'always_fail' failed"), std::string::npos) << msg;
  EXPECT_NE(msg.find("deliberate failure"), std::string::npos) << msg;
  auto art = LoadedArtifact::Load(WriteGood("missing.so", AddOneExecutable("missing_kernel")));
  msg = ErrorOf([&] { VirtualMachine v(art); });
  EXPECT_NE(msg.find("missing_kernel"), std::string::npos) << msg;
}

TEST_F(ArtifactTest, Truncated) {
  std::string path = WriteGood("trunc_src.so");
  std::string bytes = ReadFile(path);
  for (size_t cut : {size_t{0}, size_t{10}, size_t{63}, size_t{4096}, bytes.size() / 2,
                     bytes.size() - 1, bytes.size() - 64, bytes.size() - 100}) {
    std::string p = Path("trunc.so");
    WriteFile(p, bytes.substr(0, cut));
    std::string msg = ErrorOf([&] { LoadedArtifact::Load(p); });
    EXPECT_NE(msg.find("truncated"), std::string::npos) << "cut " << cut << ": " << msg;
  }
}

TEST_F(ArtifactTest, FlippedByteIsChecksumMismatch) {
  std::string bytes = ReadFile(WriteGood("flip_src.so"));
  for (size_t pos : {size_t{100}, bytes.size() - 64 - 5}) {
    std::string b = bytes;
    b[pos] ^= 0x40;
    WriteFile(Path("flip.so"), b);
    std::string msg = ErrorOf([&] { LoadedArtifact::Load(Path("flip.so")); });
    EXPECT_NE(msg.find("checksum mismatch"), std::string::npos) << msg;
    EXPECT_NE(msg.find("corrupt"), std::string::npos) << msg;
  }
}

TEST_F(ArtifactTest, WrongVersionBadMagicMissingFile) {
  std::string bytes = ReadFile(WriteGood("v_src.so"));
  std::string b = bytes;
  b[b.size() - 64 + 8] = static_cast<char>(kArtifactFormatVersion + 1);
  WriteFile(Path("v2.so"), b);
  std::string want = "was written by format version " + std::to_string(kArtifactFormatVersion + 1) +
                     "; this runtime reads version " + std::to_string(kArtifactFormatVersion);
  EXPECT_NE(ErrorOf([&] { LoadedArtifact::Load(Path("v2.so")); }).find(want), std::string::npos);
  // Version 1 artifacts call parallel bodies with one index: refused, never misrun.
  b[b.size() - 64 + 8] = 1;
  WriteFile(Path("v1.so"), b);
  EXPECT_NE(ErrorOf([&] {
              LoadedArtifact::Load(Path("v1.so"));
            }).find("was written by format version 1; this runtime reads version 2"),
            std::string::npos);
  b = bytes;
  b[b.size() - 64] = 'X';
  WriteFile(Path("magic.so"), b);
  EXPECT_NE(ErrorOf([&] { LoadedArtifact::Load(Path("magic.so")); }).find("magic"),
            std::string::npos);
  std::string msg = ErrorOf([&] { LoadedArtifact::Load(Path("does_not_exist.so")); });
  EXPECT_NE(msg.find("cannot open"), std::string::npos) << msg;
  EXPECT_NE(msg.find("does_not_exist.so"), std::string::npos) << msg;
}

// Named sections beyond the standard three round-trip; every reserved field and table entry is
// checked (edits inside the checksummed range get a recomputed checksum, so the table checks
// themselves are what must catch them).
TEST_F(ArtifactTest, SectionTable) {
  std::string path = Path("sections.so");
  ArtifactParts parts{*elf_, Params(), AddOneExecutable().ToJSON(), {}};
  parts.extra.push_back({"launch_table", "kernel0 grid=(n,1,1)", 8});
  parts.extra.push_back({"cubin.sm_90", std::string(5000, '\x7f'), 256});
  WriteArtifact(path, parts);
  auto art = LoadedArtifact::Load(path);
  uint64_t size = 0;
  const uint8_t* lt = art->Section("launch_table", &size);
  ASSERT_NE(lt, nullptr);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(lt), size), "kernel0 grid=(n,1,1)");
  const uint8_t* cubin = art->Section("cubin.sm_90", &size);
  ASSERT_NE(cubin, nullptr);
  EXPECT_EQ(size, 5000u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(cubin) % 256, 0u);
  EXPECT_EQ(art->Section("nope", &size), nullptr);
  EXPECT_EQ(art->sections().size(), 5u);
  EXPECT_NE(ErrorOf([&] {
              WriteArtifact(Path("x.so"), {*elf_, "", "{}", {{"params", "", 8}}});
            }).find("reserved"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              WriteArtifact(Path("x.so"), {*elf_, "", "{}", {{"a b", "", 8}}});
            }).find("bad section name"),
            std::string::npos);

  const std::string bytes = ReadFile(path);
  const size_t trailer = bytes.size() - 64;
  auto u64 = [&](const std::string& b, size_t at) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(b[at + i]);
    return v;
  };
  auto put = [](std::string* b, size_t at, uint64_t v) {
    for (int i = 0; i < 8; ++i) (*b)[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
  };
  const size_t table = u64(bytes, trailer + 16);
  auto reload = [&](std::string b, bool fix_checksum) {
    if (fix_checksum) put(&b, b.size() - 64 + 40, XXH3_64bits(b.data(), b.size() - 64));
    WriteFile(Path("edit.so"), b);
    return ErrorOf([&] { LoadedArtifact::Load(Path("edit.so")); });
  };
  for (size_t field : {size_t{12}, size_t{32}, size_t{56}}) {  // reserved trailer fields
    std::string b = bytes;
    b[trailer + field] = 1;
    EXPECT_NE(reload(b, false).find("reserved trailer field"), std::string::npos) << field;
  }
  std::string b = bytes;
  put(&b, table + 56, 1);  // reserved field of entry 0
  EXPECT_NE(reload(b, true).find("reserved field is not 0"), std::string::npos);
  b = bytes;
  put(&b, table + 64 + 48, 3);  // alignment 3
  EXPECT_NE(reload(b, true).find("bad alignment"), std::string::npos);
  b = bytes;
  put(&b, table + 64 + 40, u64(bytes, table + 64 + 40) + 1 * 1000000);  // size past the table
  EXPECT_NE(reload(b, true).find("out of bounds"), std::string::npos);
  b = bytes;
  put(&b, table + 64 + 32, 0);  // second section moved onto the ELF
  EXPECT_NE(reload(b, true).find("overlap"), std::string::npos);
  b = bytes;
  std::memcpy(&b[table + 64], "elf\0\0\0\0", 7);  // "params" renamed to a duplicate "elf"
  EXPECT_NE(reload(b, true).find("duplicate"), std::string::npos);
  b = bytes;
  put(&b, trailer + 24, 1000000);  // section count
  EXPECT_NE(reload(b, false).find("bad section count"), std::string::npos);
}

TEST_F(ArtifactTest, BadTensorConstantsAndJson) {
  Executable e = AddOneExecutable();
  e.constants[5].nbytes = 12;
  EXPECT_NE(ErrorOf([&] { LoadedArtifact::Load(WriteGood("c1.so", e)); }).find("nbytes"),
            std::string::npos);
  e = AddOneExecutable();
  e.constants[5].params_offset = 128;
  EXPECT_NE(ErrorOf([&] { LoadedArtifact::Load(WriteGood("c2.so", e)); }).find("exceed"),
            std::string::npos);
  e.constants[5].params_offset = 32;
  EXPECT_NE(ErrorOf([&] { LoadedArtifact::Load(WriteGood("c3.so", e)); }).find("aligned"),
            std::string::npos);
  WriteArtifact(Path("j.so"), {*elf_, Params(), "{not json"});
  EXPECT_NE(ErrorOf([&] { LoadedArtifact::Load(Path("j.so")); }).find("bad executable"),
            std::string::npos);
}

TEST_F(ArtifactTest, BadElf) {
  WriteArtifact(Path("badelf.so"),
                {"this is not an ELF file", Params(), AddOneExecutable().ToJSON()});
  std::string msg = ErrorOf([&] { LoadedArtifact::Load(Path("badelf.so")); });
  EXPECT_NE(msg.find("its 'elf' section is not an ELF file"), std::string::npos) << msg;
}

TEST(ArtifactWriteTest, FailedWriteLeavesNoFile) {
  EXPECT_THROW(WriteArtifact("/nonexistent_dir_relax/x.so", {"", "", "{}"}), Error);
  EXPECT_FALSE(fs::exists("/nonexistent_dir_relax/x.so"));
}

}  // namespace
}  // namespace relax::runtime
