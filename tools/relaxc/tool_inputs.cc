// Inputs of an artifact's entry function by its signature: --input files and generated data
// (tool_inputs.h).
#include "tool_inputs.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <set>

#include "relax/runtime/npy.h"
#include "relax/support/error.h"
#include "relax/vm/runner.h"

namespace relax::tools {
namespace {

using runtime::NDArray;
using runtime::TensorSig;

constexpr int64_t kMaxDimValue = (int64_t{1} << 31) - 1;
constexpr int64_t kMaxGeneratedElements = int64_t{1} << 30;

// The symbolic dim names of `sig`, in first-use order.
std::vector<std::string> SymbolicDims(const std::vector<TensorSig>& sig) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const auto& s : sig)
    for (const auto& d : s.dims)
      if (d.value < 0 && seen.insert(d.sym).second) names.push_back(d.sym);
  return names;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

// --dim NAME=VALUE specs (each may be a comma list) -> sizes by name, checked against `sig`.
std::map<std::string, int64_t> ParseDims(const std::vector<TensorSig>& sig,
                                         const std::vector<std::string>& specs) {
  const std::vector<std::string> known = SymbolicDims(sig);
  std::map<std::string, int64_t> dims;
  for (const auto& list : specs) {
    size_t start = 0;
    while (start <= list.size()) {
      size_t comma = list.find(',', start);
      if (comma == std::string::npos) comma = list.size();
      const std::string spec = list.substr(start, comma - start);
      start = comma + 1;
      size_t eq = spec.find('=');
      if (eq == std::string::npos || eq == 0)
        RELAX_THROW("--dim expects NAME=VALUE, got '" << spec << "'");
      const std::string name = spec.substr(0, eq), text = spec.substr(eq + 1);
      bool digits = !text.empty() && text.size() <= 10 &&
                    text.find_first_not_of("0123456789") == std::string::npos;
      int64_t v = digits ? std::stoll(text) : -1;
      if (v < 0 || v > kMaxDimValue)
        RELAX_THROW("--dim: '" << spec << "' is not a dim size in [0, " << kMaxDimValue << "]");
      if (std::find(known.begin(), known.end(), name) == known.end())
        RELAX_THROW("unknown symbolic dim '"
                    << name << "' in --dim ("
                    << (known.empty() ? "the inputs have no symbolic dims"
                                      : "symbolic dims: " + JoinNames(known))
                    << ")");
      if (!dims.emplace(name, v).second)
        RELAX_THROW("symbolic dim '" << name << "' given more than once with --dim");
    }
  }
  return dims;
}

// The sizes of the symbolic dims of inputs given with --input, by name (the first in signature
// order wins): generated inputs that share a dim with a given one agree with it.
void DimsFromFiles(const std::vector<TensorSig>& sig, const std::vector<runtime::Value>& given,
                   std::map<std::string, int64_t>* dims) {
  for (size_t i = 0; i < sig.size() && i < given.size(); ++i) {
    const auto* a = std::get_if<NDArray>(&given[i]);
    if (!a || a->shape().size() != sig[i].dims.size()) continue;
    for (size_t d = 0; d < sig[i].dims.size(); ++d)
      if (sig[i].dims[d].value < 0) dims->emplace(sig[i].dims[d].sym, a->shape()[d]);
  }
}

// Half-precision bits of k / 1024 for k in [0, 1024): exact (at most 10 significant bits, all
// normal but 0).
uint16_t HalfOfKths(uint32_t k) {
  if (k == 0) return 0;
  int e = 31 - __builtin_clz(k);  // k = 2^e * 1.m, value 2^(e - 10) * 1.m
  return static_cast<uint16_t>(((e + 5) << 10) | ((k - (1u << e)) << (10 - e)));
}

// Generated data of `shape` and `dtype` (the PrepareInputs rules) from `rng`.
NDArray Generate(const std::vector<int64_t>& shape, const std::string& dtype,
                 std::mt19937_64* rng) {
  NDArray a = NDArray::Empty(shape, runtime::ParseDType(dtype));
  std::memset(a.data(), 0, a.nbytes());
  const int64_t n = a.numel();
  auto fill = [&](auto tag, auto value) {
    auto* p = static_cast<decltype(tag)*>(a.data());
    for (int64_t i = 0; i < n; ++i) p[i] = value();
  };
  // Uniform in [-1, 1) on a grid of 2^-23 (exact in float32 and float64).
  auto uniform = [&] { return static_cast<double>((*rng)() >> 40) * 0x1p-23 - 1.0; };
  auto small_int = [&](uint64_t bound) { return [&rng, bound] { return (*rng)() % bound; }; };
  if (dtype == "float32") {
    fill(float{}, [&] { return static_cast<float>(uniform()); });
  } else if (dtype == "float64") {
    fill(double{}, uniform);
  } else if (dtype == "float16") {  // sign and k / 1024
    fill(uint16_t{}, [&] {
      uint64_t r = (*rng)();
      return static_cast<uint16_t>(((r & 1) << 15) | HalfOfKths(static_cast<uint32_t>(r >> 54)));
    });
  } else if (dtype == "bfloat16") {  // the upper half of a float32 in [-1, 1)
    fill(uint16_t{}, [&] {
      float f = static_cast<float>(uniform());
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      return static_cast<uint16_t>(bits >> 16);
    });
  } else if (dtype == "int4" || dtype == "uint4") {
    fill(uint8_t{}, [g = small_int(2)] { return static_cast<uint8_t>(g()); });
  } else if (dtype == "int8" || dtype == "uint8") {
    fill(uint8_t{}, [g = small_int(2)] { return static_cast<uint8_t>(g()); });
  } else if (dtype == "int16" || dtype == "uint16") {
    fill(uint16_t{}, [g = small_int(2)] { return static_cast<uint16_t>(g()); });
  } else if (dtype == "int32" || dtype == "uint32") {
    fill(uint32_t{}, [g = small_int(2)] { return static_cast<uint32_t>(g()); });
  } else if (dtype == "int64" || dtype == "uint64") {
    fill(uint64_t{}, small_int(2));
  } else if (dtype == "bool") {
    fill(uint8_t{}, [g = small_int(2)] { return static_cast<uint8_t>(g()); });
  }
  return a;
}

// Creates `path` as a new directory, or accepts a real directory there (never a symlink).
void MakeDirectory(const std::string& path) {
  if (::mkdir(path.c_str(), 0777) == 0) return;
  const int err = errno;
  struct stat st;
  if (err != EEXIST || ::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    RELAX_THROW("cannot create directory '" << path << "': " << std::strerror(err));
}

}  // namespace

std::map<std::string, std::string> ParseInputFiles(const std::vector<TensorSig>& sig,
                                                   const std::vector<std::string>& specs) {
  std::map<std::string, std::string> files;
  for (const std::string& spec : specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      RELAX_THROW("bad --input '" << spec << "': expected NAME=FILE.npy");
    std::string name = spec.substr(0, eq);
    bool known = false;
    for (const auto& s : sig) known |= s.name == name;
    if (!known)
      RELAX_THROW("unknown input '" << name << "' (expected inputs: "
                                    << runtime::ArtifactRunner::InputNamesText(sig) << ")");
    if (!files.emplace(name, spec.substr(eq + 1)).second)
      RELAX_THROW("input '" << name << "' given more than once");
  }
  return files;
}

runtime::Value LoadInputFile(const TensorSig& s, const std::string& path) {
  if (!s.sequence) return runtime::LoadNpy(path);
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(path, ec))
    RELAX_THROW("input '" << s.name << "' is a sequence: expected a directory of 0.npy, 1.npy, ..."
                          << ", got '" << path << "'");
  size_t count = 0;
  for (const auto& e : fs::directory_iterator(path, ec))
    if (e.path().extension() == ".npy") ++count;
  std::vector<NDArray> elems;
  for (size_t k = 0; k < count; ++k) {
    fs::path f = fs::path(path) / (std::to_string(k) + ".npy");
    if (!fs::is_regular_file(f, ec))
      RELAX_THROW("input '" << s.name << "': sequence directory '" << path << "' holds " << count
                            << " .npy files but no " << f.filename().string()
                            << " (expected 0.npy to " << count - 1 << ".npy)");
    elems.push_back(runtime::LoadNpy(f.string()));
  }
  auto seq = std::make_shared<runtime::TupleObj>();
  seq->fields = std::vector<runtime::Value>(elems.begin(), elems.end());
  return runtime::Tuple(std::move(seq));
}

std::vector<runtime::Value> PrepareInputs(const std::vector<TensorSig>& sig,
                                          const InputSpec& spec) {
  const std::map<std::string, std::string> files = ParseInputFiles(sig, spec.files);
  std::map<std::string, int64_t> dims = ParseDims(sig, spec.dims);
  std::vector<runtime::Value> values(sig.size());
  for (size_t i = 0; i < sig.size(); ++i)
    if (auto it = files.find(sig[i].name); it != files.end())
      values[i] = LoadInputFile(sig[i], it->second);
  DimsFromFiles(sig, values, &dims);
  std::mt19937_64 rng(spec.seed);
  for (size_t i = 0; i < sig.size(); ++i) {
    const TensorSig& s = sig[i];
    if (files.count(s.name) || s.default_constant >= 0) continue;  // given, or its default
    if (s.sequence)
      RELAX_THROW("input '" << s.name << "' is a sequence: give it with --input " << s.name
                            << "=DIR (DIR/0.npy, 1.npy, ...)");
    std::vector<int64_t> shape;
    int64_t numel = 1;
    for (const auto& d : s.dims) {
      int64_t v = d.value;
      if (v < 0) {
        auto it = dims.find(d.sym);
        v = it == dims.end() ? 1 : it->second;
      }
      shape.push_back(v);
      numel = v == 0 || numel == 0 ? 0 : numel * v;
      if (numel > kMaxGeneratedElements)
        RELAX_THROW("input '" << s.name << "' would have over 2^30 elements; give smaller --dim "
                              << "values or the input with --input " << s.name << "=FILE.npy");
    }
    values[i] = Generate(shape, s.dtype, &rng);
  }
  return values;
}

std::string DefaultedDimsNote(const std::vector<TensorSig>& sig, const InputSpec& spec) {
  std::map<std::string, int64_t> dims;
  std::map<std::string, std::string> files;
  try {
    dims = ParseDims(sig, spec.dims);
    files = ParseInputFiles(sig, spec.files);
  } catch (const Error&) {
    return "";  // PrepareInputs reported it
  }
  std::vector<std::string> defaulted;
  std::set<std::string> seen;
  // A dim of a given input takes its size from the file.
  for (const auto& s : sig)
    if (files.count(s.name))
      for (const auto& d : s.dims)
        if (d.value < 0) dims.emplace(d.sym, 0);
  for (const auto& s : sig) {
    if (files.count(s.name) || s.default_constant >= 0) continue;
    for (const auto& d : s.dims)
      if (d.value < 0 && !dims.count(d.sym) && seen.insert(d.sym).second)
        defaulted.push_back(d.sym);
  }
  if (defaulted.empty()) return "";
  return "symbolic dims not given with --dim took the size 1: " + JoinNames(defaulted) +
         "; give sizes with --dim NAME=VALUE";
}

std::vector<std::pair<std::string, std::string>> SaveInputs(
    const std::string& dir, const std::vector<TensorSig>& sig,
    const std::vector<runtime::Value>& values) {
  MakeDirectory(dir);
  std::vector<std::pair<std::string, std::string>> saved;
  for (size_t i = 0; i < sig.size() && i < values.size(); ++i) {
    const std::string path = dir + "/" + std::to_string(i);
    if (const auto* a = std::get_if<NDArray>(&values[i])) {
      runtime::SaveNpy(path + ".npy", *a);
      saved.emplace_back(sig[i].name, path + ".npy");
    } else if (const auto* seq = std::get_if<runtime::Tuple>(&values[i])) {
      MakeDirectory(path);
      for (size_t k = 0; k < (*seq)->fields.size(); ++k)
        runtime::SaveNpy(path + "/" + std::to_string(k) + ".npy",
                         std::get<NDArray>((*seq)->fields[k]));
      saved.emplace_back(sig[i].name, path);
    }
  }
  return saved;
}

void AddInputOptions(CLI::App& cmd, InputSpec& spec) {
  cmd.add_option("--input,-i", spec.files,
                 "Input as NAME=FILE.npy, or NAME=DIR for a sequence input (DIR/0.npy, 1.npy, "
                 "...; repeatable). Inputs not given are generated from the signature (floats "
                 "uniform in [-1, 1), integers 0 or 1); an optional input takes its default");
  cmd.add_option("--dim", spec.dims,
                 "Size of a symbolic dim of the generated inputs, NAME=VALUE (repeatable, or "
                 "comma-separated); default: its size in an --input file, else 1")
      ->delimiter(',')
      ->allow_extra_args(false);
  cmd.add_option("--seed", spec.seed, "Seed of the generated inputs' random data (default 0)");
}

}  // namespace relax::tools
