// The example BYOC plugin of docs/byoc.md: "toyacc", a toy accelerator whose code is C. It
// takes conv2d [+ bias add | batch_norm] + relu and matmul + add. For each region its codegen
// writes a C file (loops specialised to the region's constant dims; symbolic dims such as
// batch, h and w read from the tensors at run time), prefixed with toyacc_runtime.c, compiles
// it with the system C compiler and returns the object, which relaxc links into the artifact.
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "relax/partition/plugin_c_api.h"
#include "toyacc_runtime_source.h"  // kToyaccRuntime: toyacc_runtime.c as a string (CMake)

namespace {

// Patterns (docs/byoc.md, "Pattern language"): one composite per region (merge_regions = 0).
const char* kPatterns = R"(
pattern conv2d_bias_relu = nn.relu(add(nn.conv2d(*, *),
    *){arg1.ndim == 4, arg1.shape[0] == 1, arg1.shape[2] == 1, arg1.shape[3] == 1}){dtype == float32}
pattern conv2d_bn_relu = nn.relu(nn.batch_norm(nn.conv2d(*, *), *, *, *, *)){dtype == float32}
pattern conv2d_relu = nn.relu(nn.conv2d(*, *)){dtype == float32}
pattern matmul_add = add(matmul(*, *){arg0.ndim == 2, arg1.ndim == 2}, *){arg1.ndim == 1, dtype == float32}
)";

struct Gen {
  const RelaxPluginRegion& r;
  // The index of value `vid` in the runtime function's arguments (a parameter or an output).
  int Arg(int vid) const {
    if (r.values[vid].param_index >= 0) return r.values[vid].param_index;
    for (int k = 0; k < r.num_outputs; ++k)
      if (r.outputs[k] == vid) return r.num_params + k;
    throw std::runtime_error(std::string("value ") + r.values[vid].name + " is not an argument");
  }
  // Dim d of value `vid`: a literal when constant, else read from its tensor at run time.
  std::string Dim(int vid, int d) const {
    const RelaxPluginValue& v = r.values[vid];
    if (d >= v.ndim) throw std::runtime_error(std::string("value ") + v.name + " has too few dims");
    if (v.dims[d] >= 0) return std::to_string(v.dims[d]);
    return "toyacc_t(a, " + std::to_string(Arg(vid)) + ")->shape[" + std::to_string(d) + "]";
  }
  const RelaxPluginAttr* Attr(const RelaxPluginOp& op, const char* name) const {
    for (int i = 0; i < op.num_attrs; ++i)
      if (std::string(op.attrs[i].name) == name) return &op.attrs[i];
    throw std::runtime_error(std::string(op.op) + " has no attribute " + name);
  }
  std::string Ptr(int vid) const { return "toyacc_f(a, " + std::to_string(Arg(vid)) + ")"; }

  // The C body of the region: `body` (the rows [lo, hi) of the work) and the entry function.
  std::string Source() const {
    std::ostringstream c;
    const RelaxPluginOp& first = r.ops[0];
    const RelaxPluginOp& last = r.ops[r.num_ops - 1];
    int y = last.output, nargs = r.num_params + r.num_outputs;
    std::string rows;
    c << "static int32_t body(void* ctx, int64_t lo, int64_t hi) {\n"
      << "  const RelaxValue* a = (const RelaxValue*)ctx;\n";
    if (std::string(first.op) == "relax.nn.conv2d") {
      int x = first.inputs[0], w = first.inputs[1];
      const int64_t* s = Attr(first, "strides")->ints;
      const int64_t* p = Attr(first, "padding")->ints;
      const int64_t* d = Attr(first, "dilation")->ints;
      c << "  const int64_t C = " << Dim(x, 1) << ", H = " << Dim(x, 2) << ", W = " << Dim(x, 3)
        << ", O = " << Dim(y, 1) << ", OH = " << Dim(y, 2) << ", OW = " << Dim(y, 3)
        << ", CG = " << Dim(w, 1) << ", KH = " << Dim(w, 2) << ", KW = " << Dim(w, 3)
        << ", OG = O / " << Attr(first, "groups")->i << ", SH = " << s[0] << ", SW = " << s[1]
        << ", PT = " << p[0] << ", PL = " << p[1] << ", DH = " << d[0] << ", DW = " << d[1] << ";\n"
        << "  const float *x = " << Ptr(x) << ", *w = " << Ptr(w) << ";\n"
        << "  float* y = " << Ptr(y) << ";\n"
        << "  for (int64_t no = lo; no < hi; ++no) {\n"
        << "    const int64_t n = no / O, o = no % O, c0 = o / OG * CG;\n"
        << "    for (int64_t oh = 0; oh < OH; ++oh)\n"
        << "      for (int64_t ow = 0; ow < OW; ++ow) {\n"
        << "        float acc = 0.f;\n"
        << "        for (int64_t ic = 0; ic < CG; ++ic)\n"
        << "          for (int64_t kh = 0; kh < KH; ++kh) {\n"
        << "            const int64_t ih = oh * SH - PT + kh * DH;\n"
        << "            if (ih < 0 || ih >= H) continue;\n"
        << "            for (int64_t kw = 0; kw < KW; ++kw) {\n"
        << "              const int64_t iw = ow * SW - PL + kw * DW;\n"
        << "              if (iw >= 0 && iw < W)\n"
        << "                acc += x[((n * C + c0 + ic) * H + ih) * W + iw] *\n"
        << "                       w[((o * CG + ic) * KH + kh) * KW + kw];\n"
        << "            }\n"
        << "          }\n";
      for (int i = 1; i + 1 < r.num_ops; ++i) {  // the epilogue: bias add or batch_norm
        const RelaxPluginOp& e = r.ops[i];
        if (std::string(e.op) == "relax.add") {
          bool one = r.values[e.inputs[1]].dims[1] == 1;  // a bias broadcast over channels
          c << "        acc += " << Ptr(e.inputs[1]) << (one ? "[0];\n" : "[o];\n");
        } else if (std::string(e.op) == "relax.nn.batch_norm") {  // x, gamma, beta, mean, var
          char eps[32];
          std::snprintf(eps, sizeof eps, "%.9g", Attr(e, "epsilon")->f);
          c << "        acc = (acc - " << Ptr(e.inputs[3]) << "[o]) / sqrtf(" << Ptr(e.inputs[4])
            << "[o] + " << eps << "f) * " << Ptr(e.inputs[1]) << "[o] + " << Ptr(e.inputs[2])
            << "[o];\n";
        } else {
          throw std::runtime_error(std::string("unexpected op ") + e.op + " after conv2d");
        }
      }
      c << "        y[((n * O + o) * OH + oh) * OW + ow] = acc > 0.f ? acc : 0.f;\n"
        << "      }\n  }\n  return 0;\n}\n";
      rows = Dim(x, 0) + " * " + Dim(y, 1);
    } else if (std::string(first.op) == "relax.matmul" && r.num_ops == 2) {
      int A = first.inputs[0], B = first.inputs[1];
      c << "  const int64_t K = " << Dim(A, 1) << ", N = " << Dim(B, 1) << ";\n"
        << "  const float *A = " << Ptr(A) << ", *B = " << Ptr(B)
        << ", *bias = " << Ptr(last.inputs[1]) << ";\n"
        << "  float* y = " << Ptr(y) << ";\n"
        << "  for (int64_t m = lo; m < hi; ++m)\n"
        << "    for (int64_t j = 0; j < N; ++j) {\n"
        << "      float acc = 0.f;\n"
        << "      for (int64_t k = 0; k < K; ++k) acc += A[m * K + k] * B[k * N + j];\n"
        << "      y[m * N + j] = acc + bias[j];\n"
        << "    }\n  return 0;\n}\n";
      rows = Dim(A, 0);
    } else {
      throw std::runtime_error(std::string("toyacc cannot run a region starting with ") + first.op);
    }
    c << "int32_t " << r.name << "(const RelaxValue* a, int32_t num_args, RelaxValue* ret) {\n"
      << "  (void)ret;\n  if (toyacc_enter(\"" << r.name << "\", a, num_args, " << nargs
      << ")) return 1;\n"
      << "  return __relax_runtime->parallel_for(0, " << rows << ", body, (void*)a);\n}\n";
    return c.str();
  }
};

// The C compiler: $TOYACC_CC, else the first of cc and clang-22 found on PATH.
std::string FindCompiler() {
  const char* env = std::getenv("TOYACC_CC");
  for (std::string cc :
       env&&* env ? std::vector<std::string>{env} : std::vector<std::string>{"cc", "clang-22"})
    if (std::system(("command -v '" + cc + "' > /dev/null 2>&1").c_str()) == 0) return cc;
  throw std::runtime_error(env && *env ? std::string("TOYACC_CC=") + env + " is not a program"
                                       : "no C compiler (cc, clang-22) on PATH; set TOYACC_CC");
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Compiles the region's C source with the system C compiler; returns the object's bytes.
std::string Compile(const std::string& region, const std::string& source) {
  std::string cc = FindCompiler();
  char dir[] = "/tmp/toyacc-XXXXXX";
  if (!mkdtemp(dir)) throw std::runtime_error("cannot create a temporary directory");
  std::string base = std::string(dir) + "/" + region;
  std::ofstream(base + ".c") << kToyaccRuntime << "\n#include <math.h>\n" << source;
  std::string cmd =
      "'" + cc + "' -std=c11 -O2 -fPIC -fno-math-errno -c '" + base + ".c' -o '" + base + ".o'";
  std::stringstream dirs(TOYACC_SDK_INCLUDE_DIRS);  // the SDK's headers (relaxc::plugin_sdk)
  for (std::string d; std::getline(dirs, d, ':');) cmd += " -I'" + d + "'";
  int rc = std::system((cmd + " 2> '" + base + ".log'").c_str());
  std::string obj = ReadFile(base + ".o"), log = ReadFile(base + ".log");
  std::system(("rm -rf '" + std::string(dir) + "'").c_str());
  if (rc != 0 || obj.empty())
    throw std::runtime_error(cc + " failed on the region's C code (exit " +
                             std::to_string(WEXITSTATUS(rc)) + "): " + log.substr(0, 2000));
  return obj;
}

// What codegen returned, kept until `release`: region name -> (object, error).
std::mutex g_mu;
std::map<std::string, std::pair<std::string, std::string>> g_results;

int32_t Codegen(const RelaxPluginRegion* region, RelaxPluginResult* result) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_results.emplace(region->name, std::pair<std::string, std::string>()).first;
  auto& [object, error] = it->second;
  result->function = it->first.c_str();
  try {
    if (region->num_ops < 1 || region->num_outputs != 1)
      throw std::runtime_error("expected one chain with one output");
    std::string source = Gen{*region}.Source();
    if (std::getenv("TOYACC_DUMP")) std::fprintf(stderr, "%s", source.c_str());
    object = Compile(region->name, source);
    result->object = object.data();
    result->object_bytes = static_cast<int64_t>(object.size());
    return 0;
  } catch (const std::exception& e) {
    error = std::string("toyacc: ") + e.what();
    result->error = error.c_str();
    return 1;
  }
}

void Release(RelaxPluginResult* result) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_results.erase(result->function);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const RelaxPluginInfo* relax_plugin_get_info(
    uint32_t host_abi_version) {
  (void)host_abi_version;  // the host refuses the plugin when info.abi_version differs from its own
  static const RelaxPluginInfo info = {RELAX_PLUGIN_ABI_VERSION, "example", kPatterns, "cpu",
                                       /*merge_regions=*/0,      Codegen,   Release};
  return &info;
}
