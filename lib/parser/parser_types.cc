// Text IR parser: constants (inline values or digest references into a
// ConstantTable) and StructInfo (Object, Prim, Shape, Tensor, Tuple, Func).
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "parser_internal.h"
#include "relax/parser/parser.h"
#include "relax/support/error.h"

namespace relax {
namespace text {

Expr Parser::ParseConstant() {
  const Token start = Peek();
  ExpectIdent("const");
  ExpectPunct("[");
  DataType dt = ParseDType();
  if (dt.lanes != 1 || dt.is_void() || dt.bytes() <= 0 || dt.bytes() > 8)
    Fail(start, "constants of type " + ToString(dt) + " are not supported");
  ExpectPunct(",");
  ExpectPunct("(");
  std::vector<int64_t> shape;
  int64_t numel = 1;
  bool overflow = false;
  if (!IsPunct(")")) {
    do {
      if (IsPunct(")")) break;  // (n,)
      const Token dtok = Peek();
      int64_t d = ParseSignedInt("a dimension");
      if (d < 0) Fail(dtok, "negative constant dimension");
      if (d != 0 && numel > INT64_MAX / d)
        overflow = true;
      else
        numel *= d;
      shape.push_back(d);
    } while (AcceptPunct(","));
  }
  ExpectPunct(")");
  ExpectPunct(",");
  if (AcceptIdent("digest")) {
    ExpectPunct("=");
    const Token& h = Peek();
    if (h.kind != Tok::kInt) Expected("a digest (0x...)");
    Next();
    ExpectPunct("]");
    const Expr* found = nullptr;
    if (constants_) {
      auto it = constants_->by_digest.find(h.uval);
      if (it != constants_->by_digest.end()) found = &it->second;
    }
    if (!found) Fail(h, "unknown constant digest " + h.text + " (not in the constant table)");
    const ConstantNode* c = As<ConstantNode>(*found);
    if (!c || c->dtype != dt || c->shape != shape)
      Fail(h, "constant digest " + h.text + " refers to a constant of another type or shape");
    return *found;
  }
  if (overflow) Fail(start, "constant has too many elements");
  ExpectPunct("{");
  std::vector<uint8_t> data;
  int nb = dt.bytes();
  int64_t count = 0;
  if (!IsPunct("}")) {
    do {
      const Token et = Peek();
      bool neg = AcceptPunct("-");
      const Token num = Peek();
      uint8_t buf[8] = {0};
      if (dt == DataType::Float(32) || dt == DataType::Float(64)) {
        double v;
        if (num.kind == Tok::kIdent && (num.text == "nan" || num.text == "inf")) {
          v = num.text == "nan" ? std::nan("") : INFINITY;
        } else if (num.kind == Tok::kFloat || (num.kind == Tok::kInt && !num.hex)) {
          v = dt.bits == 32 ? static_cast<double>(std::strtof(num.text.c_str(), nullptr))
                            : std::strtod(num.text.c_str(), nullptr);
        } else {
          Expected("a number");
        }
        Next();
        if (AcceptPunct(":")) ParseDType();
        if (neg) v = -v;
        if (dt.bits == 32) {
          float f = static_cast<float>(v);
          std::memcpy(buf, &f, 4);
        } else {
          std::memcpy(buf, &v, 8);
        }
      } else {
        if (num.kind != Tok::kInt) Expected("an integer");
        Next();
        if (AcceptPunct(":")) ParseDType();
        uint64_t u = neg ? 0 - num.uval : num.uval;
        if (neg && (dt.is_uint() || dt.is_float() || num.uval > (1ULL << 63)))
          Fail(et, "value out of range for " + ToString(dt));
        // Narrow types: the value must fit (never silently wrap).
        if (nb < 8) {
          const int bits = 8 * nb;
          const int64_t v = static_cast<int64_t>(u);
          bool fits = dt.is_int()
                          ? v >= -(int64_t{1} << (bits - 1)) && v <= (int64_t{1} << (bits - 1)) - 1
                      : dt.is_bool() ? u <= 1
                                     : (u >> bits) == 0;
          if (!fits) Fail(et, "value out of range for " + ToString(dt));
        }
        std::memcpy(buf, &u, 8);  // little-endian host: low bytes first
      }
      if (count >= numel) Fail(et, "more elements than the shape holds");
      data.insert(data.end(), buf, buf + nb);
      ++count;
    } while (AcceptPunct(","));
  }
  if (count != numel)
    Fail(Peek(), "constant has " + std::to_string(count) + " elements, its shape needs " +
                     std::to_string(numel));
  ExpectPunct("}");
  ExpectPunct("]");
  return MakeConstant(dt, shape, std::move(data));
}

// ---- StructInfo ---------------------------------------------------------------------

std::vector<PrimExpr> Parser::ParseDimList() {
  ExpectPunct("(");
  std::vector<PrimExpr> v;
  while (!IsPunct(")")) {
    v.push_back(ParsePrimExpr());
    if (!AcceptPunct(",")) break;
  }
  ExpectPunct(")");
  return v;
}

StructInfo Parser::ParseSInfo() {
  DepthGuard g(this);
  if (AcceptPunct("?")) return nullptr;
  const Token t = Peek();
  if (t.kind != Tok::kIdent) Expected("a StructInfo");
  auto ndim_or_dims = [&](std::optional<std::vector<PrimExpr>>* dims, int* ndim) {
    if (AcceptIdent("ndim")) {
      ExpectPunct("=");
      const Token nt = Peek();
      int64_t n = ParseSignedInt("a rank");
      if (n < -1 || n > 64) Fail(nt, "rank " + std::to_string(n) + " out of range");
      *ndim = static_cast<int>(n);
    } else {
      *dims = ParseDimList();
      *ndim = static_cast<int>((*dims)->size());
    }
  };
  if (t.text == "Object") {
    Next();
    return ObjectSInfo();
  }
  if (t.text == "Prim") {
    Next();
    ExpectPunct("[");
    DataType dt = ParseDType();
    PrimExpr value;
    if (AcceptPunct(",")) {
      ExpectIdent("value");
      ExpectPunct("=");
      value = ParsePrimExpr();
    }
    ExpectPunct("]");
    return PrimSInfo(dt, value);
  }
  if (t.text == "Shape" || t.text == "Tensor") {
    Next();
    ExpectPunct("[");
    std::optional<std::vector<PrimExpr>> dims;
    int ndim = -1;
    ndim_or_dims(&dims, &ndim);
    if (t.text == "Shape") {
      ExpectPunct("]");
      return dims ? ShapeSInfo(*dims) : ShapeSInfoNDim(ndim);
    }
    ExpectPunct(",");
    DataType dt = ParseDType();
    std::string device;
    if (AcceptPunct(",")) {
      ExpectIdent("device");
      ExpectPunct("=");
      const Token& d = Peek();
      if (d.kind != Tok::kString) Expected("a device string (\"cpu\", \"cuda:0\", ...)");
      device = Next().text;
      if (device.empty()) Fail(d, "empty device string");
    }
    ExpectPunct("]");
    StructInfo s = dims ? TensorSInfo(*dims, dt) : TensorSInfoNDim(ndim, dt);
    if (device.empty()) return s;
    auto n = std::make_shared<StructInfoNode>(*s);
    n->device = device;
    return n;
  }
  if (t.text == "Tuple") {
    Next();
    ExpectPunct("[");
    std::vector<StructInfo> fields;
    while (!IsPunct("]")) {
      StructInfo f = ParseSInfo();
      if (!f) Fail(t, "tuple field without StructInfo");
      fields.push_back(f);
      if (!AcceptPunct(",")) break;
    }
    ExpectPunct("]");
    return TupleSInfo(fields);
  }
  if (t.text == "Func") {
    Next();
    ExpectPunct("[");
    ExpectPunct("(");
    std::vector<StructInfo> params;
    while (!IsPunct(")")) {
      params.push_back(ParseSInfo());
      if (!AcceptPunct(",")) break;
    }
    ExpectPunct(")");
    ExpectPunct("->");
    StructInfo ret = ParseSInfo();
    bool pure = true;
    if (AcceptPunct(",")) {
      ExpectIdent("impure");
      pure = false;
    }
    ExpectPunct("]");
    return FuncSInfo(params, ret, pure);
  }
  Expected("a StructInfo (Object, Prim, Shape, Tensor, Tuple, Func)");
}

}  // namespace text
}  // namespace relax
