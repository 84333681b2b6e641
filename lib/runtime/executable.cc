// Executable JSON serialization (ToJSON) and fully validating deserialization (FromJSON).
#include "relax/runtime/executable.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "relax/runtime/device_api.h"
#include "relax/runtime/ndarray.h"
#include "relax/support/error.h"

namespace relax::runtime {

using nlohmann::json;

namespace {

const char* OpName(Instruction::Op op) {
  switch (op) {
    case Instruction::kCall:
      return "call";
    case Instruction::kRet:
      return "ret";
    case Instruction::kGoto:
      return "goto";
    case Instruction::kIf:
      return "if";
  }
  return "?";
}
const char* ArgKindName(Arg::Kind k) {
  switch (k) {
    case Arg::kReg:
      return "reg";
    case Arg::kConst:
      return "const";
    case Arg::kImm:
      return "imm";
  }
  return "?";
}
const char* ConstKindName(Constant::Kind k) {
  switch (k) {
    case Constant::kInt:
      return "int";
    case Constant::kFloat:
      return "float";
    case Constant::kString:
      return "string";
    case Constant::kShape:
      return "shape";
    case Constant::kTensor:
      return "tensor";
  }
  return "?";
}

json FloatToJson(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

json SigToJson(const TensorSig& s) {
  json dims = json::array();
  for (const DimSig& d : s.dims) {
    if (d.sym.empty())
      dims.push_back(d.value);
    else
      dims.push_back(d.sym);
  }
  json j = {{"name", s.name}, {"dtype", s.dtype}, {"dims", dims}};
  if (s.sequence) j["sequence"] = true;
  if (!s.device.empty()) j["device"] = s.device;
  if (s.default_constant >= 0) j["default"] = s.default_constant;
  return j;
}

// ---- validating readers -------------------------------------------------------------------
[[noreturn]] void Fail(const std::string& where, const std::string& what) {
  RELAX_THROW("executable JSON: " << where << ": " << what);
}
const json& Field(const json& obj, const std::string& where, const char* key) {
  if (!obj.is_object()) Fail(where, "expected an object");
  auto it = obj.find(key);
  if (it == obj.end()) Fail(where, std::string("missing field '") + key + "'");
  return *it;
}
int64_t GetInt(const json& j, const std::string& where) {
  if (j.is_number_integer()) {
    if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      Fail(where, "integer out of range");
    return j.get<int64_t>();
  }
  Fail(where, std::string("expected an integer, got ") + j.type_name());
}
uint64_t GetU64(const json& j, const std::string& where) {
  if (j.is_number_unsigned()) return j.get<uint64_t>();
  if (j.is_number_integer()) Fail(where, "expected a non-negative integer");
  Fail(where, std::string("expected an integer, got ") + j.type_name());
}
std::string GetStr(const json& j, const std::string& where) {
  if (!j.is_string()) Fail(where, std::string("expected a string, got ") + j.type_name());
  return j.get<std::string>();
}
double GetFloat(const json& j, const std::string& where) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    if (s == "nan") return NAN;
    if (s == "inf") return INFINITY;
    if (s == "-inf") return -INFINITY;
  }
  Fail(where, std::string("expected a number, got ") + j.type_name());
}
const json& GetArray(const json& j, const std::string& where) {
  if (!j.is_array()) Fail(where, std::string("expected an array, got ") + j.type_name());
  return j;
}
std::vector<int64_t> GetIntVec(const json& j, const std::string& where) {
  std::vector<int64_t> v;
  const json& a = GetArray(j, where);
  for (size_t i = 0; i < a.size(); ++i)
    v.push_back(GetInt(a[i], where + "[" + std::to_string(i) + "]"));
  return v;
}

TensorSig ParseSig(const json& j, const std::string& where) {
  TensorSig s;
  s.name = GetStr(Field(j, where, "name"), where + ".name");
  s.dtype = GetStr(Field(j, where, "dtype"), where + ".dtype");
  try {
    ParseDType(s.dtype);
  } catch (const Error& e) {
    Fail(where + ".dtype", e.what());
  }
  const json& dims = GetArray(Field(j, where, "dims"), where + ".dims");
  for (size_t i = 0; i < dims.size(); ++i) {
    std::string w = where + ".dims[" + std::to_string(i) + "]";
    DimSig d;
    if (dims[i].is_string()) {
      d.sym = dims[i].get<std::string>();
      if (d.sym.empty()) Fail(w, "empty symbolic dim name");
    } else {
      d.value = GetInt(dims[i], w);
      if (d.value < 0) Fail(w, "negative dim");
    }
    s.dims.push_back(d);
  }
  if (j.contains("sequence")) {
    if (!j["sequence"].is_boolean()) Fail(where + ".sequence", "expected a boolean");
    s.sequence = j["sequence"].get<bool>();
    if (s.sequence && !s.dims.empty()) Fail(where + ".dims", "a sequence has no dims");
  }
  if (j.contains("device")) {
    if (!j["device"].is_string()) Fail(where + ".device", "expected a string");
    s.device = j["device"].get<std::string>();
    try {
      ParseDevice(s.device);
    } catch (const Error& e) {
      Fail(where + ".device", e.what());
    }
  }
  return s;
}

// An input's "default" (version >= 2): the index of a tensor constant of its dtype whose shape
// fits the signature's dims (fixed dims equal, a symbolic dim used twice the same size).
void ParseDefault(const json& j, const Executable& e, TensorSig* s, const std::string& where) {
  if (!j.contains("default")) return;
  const std::string w = where + ".default";
  if (e.version < 2) Fail(w, "defaults need executable version 2, this is version 1");
  const int64_t k = GetInt(j["default"], w);
  if (k < 0 || k >= static_cast<int64_t>(e.constants.size()))
    Fail(w, "constant index " + std::to_string(k) + " out of range [0, " +
                std::to_string(e.constants.size()) + ")");
  const Constant& c = e.constants[k];
  if (c.kind != Constant::kTensor) Fail(w, "constant " + std::to_string(k) + " is not a tensor");
  if (s->sequence) Fail(w, "a sequence input has no default");
  if (c.str != s->dtype) Fail(w, "the default is " + c.str + ", the input " + s->dtype);
  if (c.shape.size() != s->dims.size())
    Fail(w, "the default has rank " + std::to_string(c.shape.size()) + ", the input " +
                std::to_string(s->dims.size()));
  std::map<std::string, int64_t> sym;
  for (size_t d = 0; d < c.shape.size(); ++d) {
    const DimSig& ds = s->dims[d];
    auto [it, fresh] = sym.emplace(ds.sym, c.shape[d]);
    if (ds.sym.empty() ? ds.value != c.shape[d] : (!fresh && it->second != c.shape[d]))
      Fail(w, "the default's dim " + std::to_string(d) + " is " + std::to_string(c.shape[d]) +
                  ", which does not fit the input's dims");
  }
  s->default_constant = k;
}

}  // namespace

std::string Executable::ToJSON() const {
  json j;
  j["version"] = version;
  j["entry"] = entry;
  if (placed) j["placed"] = true;
  json funcs = json::array();
  for (const Function& f : functions) {
    json code = json::array();
    for (const Instruction& in : f.code) {
      json ji = {{"op", OpName(in.op)}};
      switch (in.op) {
        case Instruction::kCall: {
          json args = json::array();
          for (const Arg& a : in.args)
            args.push_back({{"kind", ArgKindName(a.kind)}, {"value", a.value}});
          ji["func"] = in.func;
          ji["args"] = args;
          ji["dst"] = in.dst;
          break;
        }
        case Instruction::kRet:
          ji["reg"] = in.reg;
          break;
        case Instruction::kGoto:
          ji["offset"] = in.offset;
          break;
        case Instruction::kIf:
          ji["cond"] = in.cond;
          ji["offset"] = in.offset;
          break;
      }
      code.push_back(ji);
    }
    funcs.push_back(
        {{"name", f.name}, {"params", f.param_names}, {"num_regs", f.num_regs}, {"code", code}});
  }
  j["functions"] = funcs;
  json consts = json::array();
  for (const Constant& c : constants) {
    json jc = {{"kind", ConstKindName(c.kind)}};
    switch (c.kind) {
      case Constant::kInt:
        jc["value"] = c.int_value;
        break;
      case Constant::kFloat:
        jc["value"] = FloatToJson(c.float_value);
        break;
      case Constant::kString:
        jc["value"] = c.str;
        break;
      case Constant::kShape:
        jc["value"] = c.shape;
        break;
      case Constant::kTensor:
        jc["dtype"] = c.str;
        jc["shape"] = c.shape;
        jc["params_offset"] = c.params_offset;
        jc["nbytes"] = c.nbytes;
        break;
    }
    consts.push_back(jc);
  }
  j["constants"] = consts;
  json ins = json::array(), outs = json::array();
  for (const TensorSig& s : inputs) ins.push_back(SigToJson(s));
  for (const TensorSig& s : outputs) outs.push_back(SigToJson(s));
  j["inputs"] = ins;
  j["outputs"] = outs;
  // Strings that are not UTF-8 (messages quoting an ONNX value name made of arbitrary bytes;
  // the importer checks only the graph's input and output names) are written with U+FFFD for
  // each bad byte instead of failing the compile.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string Executable::ToText() const {
  std::string out;
  for (const TensorSig& s : inputs)
    if (s.default_constant >= 0)
      out += "input '" + s.name + "' default c" + std::to_string(s.default_constant) + "\n";
  for (const Function& f : functions) {
    out += "func @" + f.name + "(";
    for (size_t i = 0; i < f.param_names.size(); ++i) out += (i ? ", " : "") + f.param_names[i];
    out += ") regs=" + std::to_string(f.num_regs) + "\n";
    for (size_t pc = 0; pc < f.code.size(); ++pc) {
      const Instruction& in = f.code[pc];
      out += "  " + std::to_string(pc) + ": ";
      auto off = [](int64_t o) { return (o >= 0 ? "+" : "") + std::to_string(o); };
      switch (in.op) {
        case Instruction::kCall: {
          if (in.dst >= 0) out += "r" + std::to_string(in.dst) + " = ";
          out += in.func + "(";
          for (size_t i = 0; i < in.args.size(); ++i) {
            const Arg& a = in.args[i];
            out += i ? ", " : "";
            out += (a.kind == Arg::kReg     ? "r"
                    : a.kind == Arg::kConst ? "c"
                                            : "#") +
                   std::to_string(a.value);
          }
          out += ")";
          break;
        }
        case Instruction::kRet:
          out += "ret r" + std::to_string(in.reg);
          break;
        case Instruction::kGoto:
          out += "goto " + off(in.offset);
          break;
        case Instruction::kIf:
          out += "if r" + std::to_string(in.cond) + " else " + off(in.offset);
          break;
      }
      out += "\n";
    }
  }
  return out;
}

Executable Executable::FromJSON(const std::string& text) {
  try {
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) RELAX_THROW("executable JSON: not valid JSON");
    if (!j.is_object()) Fail("top level", "expected an object");
    Executable e;
    int64_t version = GetInt(Field(j, "top level", "version"), "version");
    if (version < kOldestExecutableVersion || version > kExecutableVersion)
      RELAX_THROW("executable JSON: version " << version << " is not supported (this runtime reads "
                                              << kOldestExecutableVersion << " to "
                                              << kExecutableVersion << ")");
    e.version = static_cast<int>(version);
    e.entry = GetStr(Field(j, "top level", "entry"), "entry");
    if (j.contains("placed")) {
      if (!j["placed"].is_boolean()) Fail("placed", "expected a boolean");
      e.placed = j["placed"].get<bool>();
    }

    // Constants first: instruction operands are checked against the pool size.
    const json& jcs = GetArray(Field(j, "top level", "constants"), "constants");
    for (size_t i = 0; i < jcs.size(); ++i) {
      std::string w = "constants[" + std::to_string(i) + "]";
      const json& jc = jcs[i];
      std::string kind = GetStr(Field(jc, w, "kind"), w + ".kind");
      Constant c;
      if (kind == "int") {
        c.kind = Constant::kInt;
        c.int_value = GetInt(Field(jc, w, "value"), w + ".value");
      } else if (kind == "float") {
        c.kind = Constant::kFloat;
        c.float_value = GetFloat(Field(jc, w, "value"), w + ".value");
      } else if (kind == "string") {
        c.kind = Constant::kString;
        c.str = GetStr(Field(jc, w, "value"), w + ".value");
      } else if (kind == "shape") {
        c.kind = Constant::kShape;
        c.shape = GetIntVec(Field(jc, w, "value"), w + ".value");
      } else if (kind == "tensor") {
        c.kind = Constant::kTensor;
        c.str = GetStr(Field(jc, w, "dtype"), w + ".dtype");
        try {
          ParseDType(c.str);
        } catch (const Error& err) {
          Fail(w + ".dtype", err.what());
        }
        c.shape = GetIntVec(Field(jc, w, "shape"), w + ".shape");
        for (int64_t d : c.shape)
          if (d < 0) Fail(w + ".shape", "negative dim");
        c.params_offset = GetU64(Field(jc, w, "params_offset"), w + ".params_offset");
        c.nbytes = GetU64(Field(jc, w, "nbytes"), w + ".nbytes");
      } else {
        Fail(w + ".kind", "unknown constant kind '" + kind + "'");
      }
      e.constants.push_back(std::move(c));
    }

    const json& jfs = GetArray(Field(j, "top level", "functions"), "functions");
    std::unordered_set<std::string> names;
    for (size_t fi = 0; fi < jfs.size(); ++fi) {
      std::string fw = "functions[" + std::to_string(fi) + "]";
      const json& jf = jfs[fi];
      Function f;
      f.name = GetStr(Field(jf, fw, "name"), fw + ".name");
      if (f.name.empty()) Fail(fw + ".name", "empty function name");
      if (!names.insert(f.name).second) Fail(fw + ".name", "duplicate function '" + f.name + "'");
      fw = "function '" + f.name + "'";
      const json& jp = GetArray(Field(jf, fw, "params"), fw + ".params");
      for (size_t i = 0; i < jp.size(); ++i)
        f.param_names.push_back(GetStr(jp[i], fw + ".params[" + std::to_string(i) + "]"));
      f.num_regs = GetInt(Field(jf, fw, "num_regs"), fw + ".num_regs");
      if (f.num_regs < static_cast<int64_t>(f.param_names.size()) || f.num_regs > (1 << 24))
        Fail(fw + ".num_regs", "num_regs " + std::to_string(f.num_regs) +
                                   " is out of range (must be >= the " +
                                   std::to_string(f.param_names.size()) + " params)");
      const json& jcode = GetArray(Field(jf, fw, "code"), fw + ".code");
      if (jcode.empty()) Fail(fw + ".code", "empty function body");
      const int64_t ncode = static_cast<int64_t>(jcode.size());
      auto check_reg = [&](int64_t r, const std::string& w) {
        if (r < 0 || r >= f.num_regs)
          Fail(w, "register " + std::to_string(r) + " out of range [0, " +
                      std::to_string(f.num_regs) + ")");
      };
      auto check_target = [&](int64_t pc, int64_t off, const std::string& w) {
        int64_t target;
        if (__builtin_add_overflow(pc, off, &target) || target < 0 || target >= ncode)
          Fail(w, "jump target " + std::to_string(pc) + "+" + std::to_string(off) +
                      " is outside the function (" + std::to_string(ncode) + " instructions)");
      };
      for (int64_t pc = 0; pc < ncode; ++pc) {
        std::string w = fw + ".code[" + std::to_string(pc) + "]";
        const json& ji = jcode[pc];
        std::string op = GetStr(Field(ji, w, "op"), w + ".op");
        Instruction in;
        if (op == "call") {
          in.op = Instruction::kCall;
          in.func = GetStr(Field(ji, w, "func"), w + ".func");
          if (in.func.empty()) Fail(w + ".func", "empty callee name");
          in.dst = GetInt(Field(ji, w, "dst"), w + ".dst");
          if (in.dst >= 0) check_reg(in.dst, w + ".dst");
          const json& ja = GetArray(Field(ji, w, "args"), w + ".args");
          for (size_t ai = 0; ai < ja.size(); ++ai) {
            std::string aw = w + ".args[" + std::to_string(ai) + "]";
            std::string k = GetStr(Field(ja[ai], aw, "kind"), aw + ".kind");
            Arg a;
            a.value = GetInt(Field(ja[ai], aw, "value"), aw + ".value");
            if (k == "reg") {
              a.kind = Arg::kReg;
              check_reg(a.value, aw);
            } else if (k == "const") {
              a.kind = Arg::kConst;
              if (a.value < 0 || a.value >= static_cast<int64_t>(e.constants.size()))
                Fail(aw, "constant index " + std::to_string(a.value) + " out of range [0, " +
                             std::to_string(e.constants.size()) + ")");
            } else if (k == "imm") {
              a.kind = Arg::kImm;
            } else {
              Fail(aw + ".kind", "unknown argument kind '" + k + "'");
            }
            in.args.push_back(a);
          }
        } else if (op == "ret") {
          in.op = Instruction::kRet;
          in.reg = GetInt(Field(ji, w, "reg"), w + ".reg");
          check_reg(in.reg, w + ".reg");
        } else if (op == "goto") {
          in.op = Instruction::kGoto;
          in.offset = GetInt(Field(ji, w, "offset"), w + ".offset");
          check_target(pc, in.offset, w + ".offset");
        } else if (op == "if") {
          in.op = Instruction::kIf;
          in.cond = GetInt(Field(ji, w, "cond"), w + ".cond");
          check_reg(in.cond, w + ".cond");
          in.offset = GetInt(Field(ji, w, "offset"), w + ".offset");
          check_target(pc, in.offset, w + ".offset");
          check_target(pc, 1, w);
        } else {
          Fail(w + ".op", "unknown instruction op '" + op + "'");
        }
        f.code.push_back(std::move(in));
      }
      e.functions.push_back(std::move(f));
    }
    if (!names.count(e.entry)) Fail("entry", "entry function '" + e.entry + "' is not defined");

    const json& jin = GetArray(Field(j, "top level", "inputs"), "inputs");
    for (size_t i = 0; i < jin.size(); ++i)
      e.inputs.push_back(ParseSig(jin[i], "inputs[" + std::to_string(i) + "]"));
    for (size_t i = 0; i < jin.size(); ++i)
      ParseDefault(jin[i], e, &e.inputs[i], "inputs[" + std::to_string(i) + "]");
    const json& jout = GetArray(Field(j, "top level", "outputs"), "outputs");
    for (size_t i = 0; i < jout.size(); ++i) {
      std::string w = "outputs[" + std::to_string(i) + "]";
      e.outputs.push_back(ParseSig(jout[i], w));
      if (jout[i].contains("default")) Fail(w + ".default", "an output has no default");
    }
    for (const Function& f : e.functions) {
      if (f.name == e.entry && f.param_names.size() != e.inputs.size())
        Fail("inputs", "entry function '" + e.entry + "' takes " +
                           std::to_string(f.param_names.size()) + " params but the signature has " +
                           std::to_string(e.inputs.size()) + " inputs");
    }
    return e;
  } catch (const json::exception& ex) {
    RELAX_THROW("executable JSON: " << ex.what());
  }
}

}  // namespace relax::runtime
