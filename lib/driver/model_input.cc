// Model loading and option parsing shared by the compile driver, `relaxc compile` and `relaxc
// tune`.
#include "relax/driver/model_input.h"

#include <filesystem>
#include <memory>

#include "relax/parser/parser.h"
#include "relax/support/error.h"
#include "relax/support/file.h"

namespace relax::driver {

namespace {

// Parses a text-IR module; --bound values become `bound.<name>` attributes of @main, as the
// ONNX importer records them.
IRModule LoadTextIR(const std::string& path,
                    const std::map<std::string, std::pair<int64_t, int64_t>>& bounds) {
  IRModule mod = ParseModule(ReadRegularFile(path, "text IR file"), path);
  const FunctionNode* main_fn = mod.GetFunction("main");
  if (!main_fn) throw Error("'" + path + "' has no @main function");
  if (!bounds.empty()) {
    auto fn = std::make_shared<FunctionNode>(*main_fn);
    for (const auto& [name, b] : bounds)
      fn->attrs["bound." + name] = std::vector<int64_t>{b.first, b.second};
    mod.AddFunction("main", fn);
  }
  return mod;
}

}  // namespace

// Parses a whole decimal integer (no trailing characters).
int64_t ParseInt(const std::string& text, const std::string& spec, const char* option) {
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size())
    throw Error(std::string(option) + ": '" + text + "' is not an integer in '" + spec + "'");
  return v;
}

// NAME=MAX or NAME=MIN..MAX with 0 <= MIN <= MAX (symbolic dims are sizes).
std::pair<int64_t, int64_t> ParseBound(const std::string& spec, std::string* name) {
  auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0)
    throw Error("--bound expects NAME=MAX or NAME=MIN..MAX, got '" + spec + "'");
  *name = spec.substr(0, eq);
  std::string range = spec.substr(eq + 1);
  auto dots = range.find("..");
  std::pair<int64_t, int64_t> r =
      dots == std::string::npos
          ? std::pair<int64_t, int64_t>{0, ParseInt(range, spec)}
          : std::pair<int64_t, int64_t>{ParseInt(range.substr(0, dots), spec),
                                        ParseInt(range.substr(dots + 2), spec)};
  if (r.first < 0 || r.second < r.first)
    throw Error("--bound: '" + spec + "' is not a range 0 <= MIN <= MAX of a dim size");
  return r;
}

// `.rx` inputs are text IR (any stage dump or a hand-written module); everything else is ONNX.
std::string ParseDimValue(const std::string& spec, const char* option, int64_t max,
                          int64_t* value) {
  auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0)
    throw Error(std::string(option) + " expects NAME=VALUE, got '" + spec + "'");
  *value = ParseInt(spec.substr(eq + 1), spec, option);
  if (*value < 0 || *value > max)
    throw Error(std::string(option) + ": '" + spec + "' is not a dim size in [0, " +
                std::to_string(max) + "]");
  return spec.substr(0, eq);
}

bool IsTextIR(const std::string& path) { return std::filesystem::path(path).extension() == ".rx"; }

IRModule LoadModel(const std::string& path, const frontend::OnnxImportOptions& opts) {
  return IsTextIR(path) ? LoadTextIR(path, opts.bounds) : frontend::ImportOnnx(path, opts);
}

void ParsePassOptions(const std::vector<std::string>& specs,
                      std::map<std::string, std::string>* options) {
  for (const auto& spec : specs) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--pass-option expects KEY=VALUE, got '" + spec + "'");
    std::string key = spec.substr(0, eq);
    if (!options->emplace(key, spec.substr(eq + 1)).second)
      throw UsageError("--pass-option: '" + key + "' is given twice");
  }
}

std::string JoinCommas(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
  return out;
}

}  // namespace relax::driver
