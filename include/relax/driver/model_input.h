// What the compile driver, `relaxc compile` and `relaxc tune` share: parsing --bound /
// NAME=VALUE / --pass-option specs and loading the model they name (ONNX, or a text-IR module
// for .rx files).
#ifndef RELAX_DRIVER_MODEL_INPUT_H_
#define RELAX_DRIVER_MODEL_INPUT_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "relax/frontend/onnx.h"
#include "relax/ir/module.h"
#include "relax/support/error.h"

namespace relax::driver {

/// A bad option value, found before any work (the CLI's usage errors: exit status 2).
class UsageError : public Error {
 public:
  using Error::Error;
};

/// Parses a whole decimal integer (no trailing characters); Error naming `option` and `spec`.
int64_t ParseInt(const std::string& text, const std::string& spec, const char* option = "--bound");

/// NAME=VALUE with VALUE a dim size in [0, max] (`option` names the flag in errors, e.g.
/// "--stats-at", "--dim"); returns the name and stores the value in `*value`.
std::string ParseDimValue(const std::string& spec, const char* option, int64_t max, int64_t* value);

/// NAME=MAX or NAME=MIN..MAX with 0 <= MIN <= MAX (symbolic dims are sizes).
std::pair<int64_t, int64_t> ParseBound(const std::string& spec, std::string* name);

/// `--pass-option KEY=VALUE` specs into `*options` (the PassContext's options map); UsageError
/// naming the spec when it has no '=' or an empty key, or when a key is given twice.
void ParsePassOptions(const std::vector<std::string>& specs,
                      std::map<std::string, std::string>* options);

/// `.rx` inputs are text IR (any stage dump or a hand-written module); everything else is ONNX.
bool IsTextIR(const std::string& path);

/// The model at `path`: text IR (with `opts.bounds` as `bound.<name>` attributes of @main, as
/// the ONNX importer records them) or ONNX imported with `opts`.
IRModule LoadModel(const std::string& path, const frontend::OnnxImportOptions& opts);

/// `items` joined by `sep` ("a,b,c").
std::string JoinCommas(const std::vector<std::string>& items, const std::string& sep = ",");

}  // namespace relax::driver

#endif  // RELAX_DRIVER_MODEL_INPUT_H_
