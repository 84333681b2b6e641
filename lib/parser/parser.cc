// Text IR parser, module and Relax level: module attributes, functions,
// binding blocks, expressions; op calls are checked against the op registry's
// StructInfo inference. (Constants and StructInfo: parser_types.cc.)
#include "relax/parser/parser.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "parser_internal.h"
#include "relax/ir/expr_functor.h"
#include "relax/op/op.h"
#include "relax/support/error.h"

namespace relax {

void ConstantTable::Add(const Expr& c) {
  if (const ConstantNode* n = As<ConstantNode>(c)) by_digest.emplace(n->digest, c);
}

ConstantTable CollectConstants(const IRModule& mod) {
  struct Collector : ExprVisitor {
    ConstantTable t;
    void VisitExpr_(const ConstantNode*, const Expr& e) override { t.Add(e); }
  } c;
  for (const auto& [name, fn] : mod.functions) {
    c.VisitExpr(fn);
    for (const Expr& d : As<FunctionNode>(fn)->param_defaults)
      if (d) c.t.Add(d);
  }
  return std::move(c.t);
}

IRModule ParseModule(const std::string& text, const std::string& filename,
                     const ConstantTable* constants) {
  text::Parser p(filename, text, constants);
  return p.ParseModule();
}

namespace text {

namespace {
constexpr int kMaxDepth = 200;

// True unless `a` (annotated) provably describes the same values as `b` (inferred):
// every dim must be provably equal (symbolic dims are >= 0). An annotation that only
// might match is rejected; match_cast is the way to assert a shape.
bool Mismatch(const StructInfo& a, const StructInfo& b, arith::Analyzer& an) {
  if (!a || !b || a == b) return false;
  if (a->kind == SIKind::kObject || b->kind == SIKind::kObject) return false;
  if (a->kind != b->kind) return true;
  switch (a->kind) {
    case SIKind::kPrim:
      return a->dtype != b->dtype;
    case SIKind::kTensor:
      if (!a->dtype.is_void() && !b->dtype.is_void() && a->dtype != b->dtype) return true;
      if (!a->device.empty() && !b->device.empty() && a->device != b->device) return true;
      [[fallthrough]];
    case SIKind::kShape:
      if (a->ndim >= 0 && b->ndim >= 0 && a->ndim != b->ndim) return true;
      if (a->values && b->values && a->values->size() == b->values->size()) {
        for (size_t i = 0; i < a->values->size(); ++i)
          if (!an.CanProveEqual((*a->values)[i], (*b->values)[i])) return true;
      }
      return false;
    case SIKind::kTuple:
      if (a->fields.size() != b->fields.size()) return true;
      for (size_t i = 0; i < a->fields.size(); ++i)
        if (Mismatch(a->fields[i], b->fields[i], an)) return true;
      return false;
    default:
      return false;
  }
}
}  // namespace

Parser::Parser(std::string filename, const std::string& src, const ConstantTable* constants)
    : filename_(std::move(filename)), toks_(Lex(src)), constants_(constants) {}

Parser::DepthGuard::DepthGuard(Parser* parser) : p(parser) {
  if (++p->depth_ > kMaxDepth) {
    --p->depth_;
    p->Fail(p->Peek(), "nesting too deep (more than " + std::to_string(kMaxDepth) + " levels)");
  }
}

const Token& Parser::Peek(size_t k) const {
  size_t i = pos_ + k;
  if (i >= toks_.size()) return toks_.back();
  // Never look past an error token: it ends the stream.
  for (size_t j = pos_; j < i; ++j)
    if (toks_[j].kind == Tok::kError || toks_[j].kind == Tok::kEOF) return toks_[j];
  return toks_[i];
}
const Token& Parser::Next() {
  const Token& t = Peek();
  if (t.kind == Tok::kError) Fail(t, t.text);
  if (t.kind != Tok::kEOF) ++pos_;
  return t;
}
bool Parser::IsPunct(const char* p, size_t k) const {
  const Token& t = Peek(k);
  return t.kind == Tok::kPunct && t.text == p;
}
bool Parser::IsIdent(const char* kw, size_t k) const {
  const Token& t = Peek(k);
  return t.kind == Tok::kIdent && t.text == kw;
}
bool Parser::AcceptPunct(const char* p) {
  if (!IsPunct(p)) return false;
  Next();
  return true;
}
bool Parser::AcceptIdent(const char* kw) {
  if (!IsIdent(kw)) return false;
  Next();
  return true;
}
void Parser::ExpectPunct(const char* p) {
  if (!AcceptPunct(p)) Expected(std::string("'") + p + "'");
}
void Parser::ExpectIdent(const char* kw) {
  if (!AcceptIdent(kw)) Expected(std::string("'") + kw + "'");
}
std::string Parser::ExpectName(const char* what) {
  if (Peek().kind != Tok::kIdent) Expected(what);
  return Next().text;
}
void Parser::Fail(const Token& at, const std::string& msg) const {
  throw Error(filename_ + ":" + std::to_string(at.line) + ":" + std::to_string(at.col) +
              ": error: " + msg);
}
void Parser::Expected(const std::string& what) const {
  const Token& t = Peek();
  if (t.kind == Tok::kError) Fail(t, t.text);
  Fail(t, "expected " + what + ", found " + Describe(t));
}

DataType Parser::ParseDType() {
  const Token& t = Peek();
  DataType dt;
  if (t.kind != Tok::kIdent || !ParseDataType(t.text, &dt)) Expected("a data type (f32, i64, ...)");
  Next();
  return dt;
}

int64_t Parser::ParseSignedInt(const char* what) {
  bool neg = AcceptPunct("-");
  const Token& t = Peek();
  if (t.kind != Tok::kInt) Expected(what);
  uint64_t limit = neg ? (1ULL << 63) : static_cast<uint64_t>(INT64_MAX);
  if (t.uval > limit) Fail(t, "integer " + t.text + " does not fit in 64 bits");
  Next();
  return neg ? static_cast<int64_t>(0 - t.uval) : static_cast<int64_t>(t.uval);
}

// ---- module ---------------------------------------------------------------------

IRModule Parser::ParseModule() {
  IRModule mod;
  mod_ = &mod;
  std::map<std::string, Token> defined;
  while (Peek().kind != Tok::kEOF) {
    const Token start = Peek();
    if (IsIdent("module")) {
      ParseModuleAttrs(&mod);
      continue;
    }
    std::string name;
    if (IsIdent("func")) {
      Expr f = ParseFunction(&name);
      if (defined.count(name)) Fail(start, "function @" + name + " is already defined");
      mod.AddFunction(name, f);
    } else if (IsIdent("prim_func")) {
      tir::PrimFunc f = ParsePrimFunc(&name);
      if (defined.count(name)) Fail(start, "function @" + name + " is already defined");
      mod.AddPrimFunc(name, f);
    } else {
      Expected("'func', 'prim_func' or 'module attributes'");
    }
    defined.emplace(name, start);
  }
  for (const auto& [name, tok] : global_refs_)
    if (!defined.count(name)) Fail(tok, "undefined function @" + name);
  mod_ = nullptr;
  return mod;
}

void Parser::ParseModuleAttrs(IRModule* mod) {
  ExpectIdent("module");
  ExpectIdent("attributes");
  ParseStringAttrs(&mod->attrs);
}

void Parser::ParseStringAttrs(std::map<std::string, std::string>* out) {
  ExpectPunct("{");
  if (AcceptPunct("}")) return;
  do {
    const Token& k = Peek();
    if (k.kind != Tok::kIdent && k.kind != Tok::kString) Expected("an attribute name");
    std::string key = Next().text;
    ExpectPunct("=");
    if (Peek().kind != Tok::kString) Expected("a string attribute value");
    (*out)[key] = Next().text;
  } while (AcceptPunct(","));
  ExpectPunct("}");
}

Expr Parser::ParseFunction(std::string* name) {
  ExpectIdent("func");
  if (Peek().kind != Tok::kAt) Expected("a function name '@name'");
  *name = Next().text;
  BlockBuilder bb(mod_);
  bb_ = &bb;
  rvars_.clear();
  closed_dataflow_.clear();
  prim_scopes_.assign(1, {});
  auto fn = std::make_shared<FunctionNode>();
  ExpectPunct("(");
  define_prim_vars_ = true;
  if (!IsPunct(")")) {
    do {
      const Token& t = Peek();
      if (t.kind != Tok::kPercent) Expected("a parameter '%name: StructInfo'");
      Token nt = Next();
      if (rvars_.count(nt.text)) Fail(nt, "parameter '%" + nt.text + "' is already defined");
      ExpectPunct(":");
      const Token st = Peek();
      StructInfo s = ParseSInfo();
      if (!s) Fail(st, "parameter '%" + nt.text + "' needs a StructInfo");
      VarRef v = MakeVar(nt.text, s);
      rvars_[nt.text] = v;
      fn->params.push_back(v);
      // `= const[...]`: the parameter's default (an optional input of @main).
      if (AcceptPunct("=")) {
        const Token dt = Peek();
        if (!IsIdent("const")) Expected("a constant default value 'const[...]'");
        Expr def = ParseConstant();
        std::string why = ParamDefaultMismatch(s, def);
        if (!why.empty()) Fail(dt, "parameter '%" + nt.text + "': " + why);
        fn->param_defaults.resize(fn->params.size());
        fn->param_defaults.back() = def;
      }
    } while (AcceptPunct(","));
    if (!fn->param_defaults.empty()) fn->param_defaults.resize(fn->params.size());
  }
  ExpectPunct(")");
  ExpectPunct("->");
  // The result may name dims that a match_cast in the body binds.
  fn->ret_sinfo = ParseSInfo();
  define_prim_vars_ = false;
  if (AtAttrs()) fn->attrs = ParseAttrs();
  ExpectPunct("{");
  fn->body = ParseSeq();
  ExpectPunct("}");
  std::vector<StructInfo> ps;
  for (const auto& p : fn->params) ps.push_back(p->sinfo);
  fn->sinfo = FuncSInfo(ps, fn->ret_sinfo);
  bb_ = nullptr;
  return fn;
}

Expr Parser::ParseSeq() {
  DepthGuard g(this);
  auto seq = std::make_shared<SeqExprNode>();
  while (!IsIdent("return")) {
    if (IsIdent("dataflow") && IsPunct("{", 1)) {
      Next();
      Next();
      BindingBlock block;
      block.is_dataflow = true;
      while (!AcceptPunct("}")) ParseBinding(true, &block);
      for (const auto& b : block.bindings) {
        if (b.var->kind != ExprKind::kDataflowVar) continue;
        rvars_.erase(b.var->name);
        closed_dataflow_.insert(b.var->name);
      }
      seq->blocks.push_back(std::move(block));
    } else if (Peek().kind == Tok::kPercent) {
      if (seq->blocks.empty() || seq->blocks.back().is_dataflow) seq->blocks.push_back({});
      ParseBinding(false, &seq->blocks.back());
    } else {
      Expected("a binding, 'dataflow {' or 'return'");
    }
  }
  ExpectIdent("return");
  seq->body = ParseExpr();
  seq->sinfo = seq->body->sinfo;
  return seq;
}

void Parser::ParseBinding(bool in_dataflow, BindingBlock* block) {
  bool output = false;
  if (in_dataflow && IsIdent("output") && Peek(1).kind == Tok::kPercent) {
    Next();
    output = true;
  }
  if (Peek().kind != Tok::kPercent) Expected("a binding '%name: StructInfo = value'");
  const Token name_tok = Next();
  if (rvars_.count(name_tok.text))
    Fail(name_tok, "variable '%" + name_tok.text + "' is already defined");
  ExpectPunct(":");
  // Find the '=' ending the annotation to see whether the value is a match_cast: its
  // pattern defines symbolic vars the annotation may use, so it is parsed first.
  size_t annot_pos = pos_;
  size_t eq = pos_;
  int d = 0;
  for (;; ++eq) {
    if (eq >= toks_.size() || toks_[eq].kind == Tok::kEOF || toks_[eq].kind == Tok::kError) break;
    const Token& t = toks_[eq];
    if (t.kind != Tok::kPunct) continue;
    if (t.text == "(" || t.text == "[" || t.text == "{") ++d;
    if (t.text == ")" || t.text == "]" || t.text == "}") --d;
    if (d < 0 || (d == 0 && t.text == "=")) break;
  }
  bool is_match = eq + 2 < toks_.size() && toks_[eq].kind == Tok::kPunct && toks_[eq].text == "=" &&
                  toks_[eq + 1].kind == Tok::kIdent && toks_[eq + 1].text == "match_cast" &&
                  toks_[eq + 2].kind == Tok::kPunct && toks_[eq + 2].text == "(";
  Binding b;
  StructInfo annot;
  if (is_match) {
    pos_ = eq + 1;
    const Token vt = Next();
    Next();
    b.value = ParseExpr();
    b.value = NormalizeValue(b.value, vt, nullptr);
    ExpectPunct(",");
    define_prim_vars_ = true;
    b.match_sinfo = ParseSInfo();
    define_prim_vars_ = false;
    if (!b.match_sinfo) Fail(vt, "match_cast needs a StructInfo");
    ExpectPunct(")");
    size_t end = pos_;
    pos_ = annot_pos;
    annot = ParseSInfo();
    if (!IsPunct("=")) Expected("'='");
    pos_ = end;
  } else {
    annot = ParseSInfo();
    ExpectPunct("=");
    const Token vt = Peek();
    if (IsIdent("match_cast")) Expected("'(' after match_cast");
    b.value = ParseExpr();
    b.value = NormalizeValue(b.value, vt, annot);
  }
  if (!annot) annot = b.match_sinfo ? b.match_sinfo : b.value->sinfo;
  if (!annot) annot = ObjectSInfo();
  bool df = in_dataflow && !output;
  b.var = MakeVar(name_tok.text, annot, df);
  rvars_[name_tok.text] = b.var;
  closed_dataflow_.erase(name_tok.text);
  block->bindings.push_back(std::move(b));
}

VarRef Parser::LookupRelaxVar(const Token& t) {
  auto it = rvars_.find(t.text);
  if (it != rvars_.end()) return it->second;
  if (closed_dataflow_.count(t.text))
    Fail(t, "dataflow var '%" + t.text + "' is used outside its dataflow block");
  Fail(t, "undefined variable '%" + t.text + "'");
}

Expr Parser::NormalizeValue(const Expr& e, const Token& at, const StructInfo& annotated) {
  switch (e->kind) {
    case ExprKind::kCall: {
      const CallNode* c = As<CallNode>(e);
      const OpNode* op = As<OpNode>(c->op);
      if (!op) {
        StructInfo s = c->sinfo_args.size() == 1 ? c->sinfo_args[0] : annotated;
        return WithSInfo(e, s ? s : ObjectSInfo());
      }
      const OpInfo* info = LookupOp(op->name);
      if (!info) Fail(at, "unknown op '" + op->name + "'");
      // Only the callee of a destination-passing call may lack StructInfo.
      bool dps = op->name == "relax.call_tir" || op->name == "relax.call_dps_library";
      for (size_t i = 0; i < c->args.size(); ++i) {
        const Expr& a = c->args[i];
        bool callee =
            dps && i == 0 && (a->kind == ExprKind::kGlobalVar || a->kind == ExprKind::kExternFunc);
        if (!a->sinfo && !callee)
          Fail(at, "op '" + op->name + "': argument " + ToString(a) + " has no StructInfo");
      }
      StructInfo s;
      try {
        s = bb_->Canonicalize(info->infer(*c, *bb_));
      } catch (const Error& err) {
        Fail(at, err.what());
      }
      if (!s) Fail(at, "op '" + op->name + "': StructInfo inference returned nothing");
      if (annotated && Mismatch(annotated, s, bb_->analyzer()))
        Fail(at, "op '" + op->name + "': annotated StructInfo " + ToString(annotated) +
                     " does not match the inferred " + ToString(s));
      return WithSInfo(e, s);
    }
    case ExprKind::kTuple:
    case ExprKind::kTupleGetItem:
      if (e->sinfo) return e;
      try {
        return bb_->Normalize(e);
      } catch (const Error& err) {
        Fail(at, err.what());
      }
    case ExprKind::kIf:
    case ExprKind::kSeqExpr:
      if (annotated) return WithSInfo(e, annotated);
      return e;
    default:
      return e;
  }
}

// ---- expressions ------------------------------------------------------------------

Expr Parser::ParseExpr() {
  DepthGuard g(this);
  const Token start = Peek();
  Expr e = ParsePrimaryExpr();
  while (IsPunct(".") && Peek(1).kind == Tok::kInt) {
    Next();
    const Token& it = Next();
    if (it.uval > 1000000) Fail(it, "tuple index " + it.text + " is too large");
    e = NormalizeValue(MakeTupleGetItem(e, static_cast<int>(it.uval)), start, nullptr);
  }
  return e;
}

bool Parser::AtAttrs() const {
  return IsPunct("{") && (Peek(1).kind == Tok::kIdent || Peek(1).kind == Tok::kString) &&
         IsPunct("=", 2);
}

Attrs Parser::ParseAttrs() {
  Attrs attrs;
  ExpectPunct("{");
  do {
    const Token& k = Peek();
    if (k.kind != Tok::kIdent && k.kind != Tok::kString) Expected("an attribute name");
    const Token key = Next();
    ExpectPunct("=");
    if (attrs.count(key.text)) Fail(key, "duplicate attribute '" + key.text + "'");
    attrs[key.text] = ParseAttrValue();
  } while (AcceptPunct(","));
  ExpectPunct("}");
  return attrs;
}

AttrValue Parser::ParseAttrValue() {
  const Token& t = Peek();
  if (t.kind == Tok::kString) return Next().text;
  if (AcceptPunct("[")) {
    std::vector<int64_t> v;
    if (!IsPunct("]")) {
      do {
        v.push_back(ParseSignedInt("an integer"));
      } while (AcceptPunct(","));
    }
    ExpectPunct("]");
    return v;
  }
  // Numbers: a float spelling or a dtype suffix makes a double.
  bool neg = IsPunct("-");
  const Token& n = Peek(neg ? 1 : 0);
  bool is_float = n.kind == Tok::kFloat ||
                  (n.kind == Tok::kIdent && (n.text == "nan" || n.text == "inf")) ||
                  (n.kind == Tok::kInt && IsPunct(":", neg ? 2 : 1));
  if (!is_float) return ParseSignedInt("an attribute value");
  if (neg) Next();
  const Token num = Next();
  double v = 0;
  if (num.kind == Tok::kIdent)
    v = num.text == "nan" ? std::nan("") : INFINITY;
  else if (num.kind == Tok::kFloat || num.kind == Tok::kInt)
    v = std::strtod(num.text.c_str(), nullptr);
  else
    Fail(num, "expected a number, found " + Describe(num));
  if (AcceptPunct(":")) ParseDType();
  return neg ? -v : v;
}

void Parser::ParseCallSuffix(std::vector<Expr>* args, std::vector<StructInfo>* sinfo_args,
                             Attrs* attrs) {
  ExpectPunct("(");
  if (!IsPunct(")")) {
    do {
      args->push_back(ParseExpr());
    } while (AcceptPunct(","));
  }
  ExpectPunct(")");
  if (AcceptPunct("->")) {
    ExpectPunct("[");
    do {
      StructInfo s = ParseSInfo();
      if (!s) Expected("a StructInfo");
      sinfo_args->push_back(s);
    } while (AcceptPunct(","));
    ExpectPunct("]");
  }
  if (AtAttrs()) *attrs = ParseAttrs();
}

Expr Parser::ParseBranch() {
  if (!AcceptPunct("{")) return ParseExpr();
  auto saved_vars = rvars_;
  auto saved_closed = closed_dataflow_;
  Expr s = ParseSeq();
  ExpectPunct("}");
  rvars_ = std::move(saved_vars);
  closed_dataflow_ = std::move(saved_closed);
  return s;
}

Expr Parser::ParsePrimaryExpr() {
  DepthGuard g(this);
  const Token t = Peek();
  auto finish_call = [&](Expr callee) {
    std::vector<Expr> args;
    std::vector<StructInfo> sinfo_args;
    Attrs attrs;
    ParseCallSuffix(&args, &sinfo_args, &attrs);
    return NormalizeValue(MakeCall(callee, args, attrs, sinfo_args), t, nullptr);
  };
  switch (t.kind) {
    case Tok::kPercent:
      Next();
      return LookupRelaxVar(t);
    case Tok::kAt: {
      Next();
      global_refs_.push_back({t.text, t});
      Expr gv = MakeGlobalVar(t.text);
      if (IsPunct("(")) return finish_call(gv);
      return gv;
    }
    case Tok::kString:
      Next();
      return MakeStringImm(t.text);
    case Tok::kPunct:
      if (AcceptPunct("(")) {
        std::vector<Expr> fields;
        bool comma = false;
        if (!IsPunct(")")) {
          fields.push_back(ParseExpr());
          while (AcceptPunct(",")) {
            comma = true;
            if (IsPunct(")")) break;
            fields.push_back(ParseExpr());
          }
        }
        ExpectPunct(")");
        if (fields.size() == 1 && !comma) return fields[0];  // plain grouping
        return NormalizeValue(MakeTuple(fields), t, nullptr);
      }
      break;
    case Tok::kIdent: {
      if (t.text == "const" && IsPunct("[", 1)) return ParseConstant();
      if (t.text == "shape" && IsPunct("(", 1)) {
        Next();
        Next();
        std::vector<PrimExpr> v;
        if (!IsPunct(")")) {
          do {
            v.push_back(ParsePrimExpr());
          } while (AcceptPunct(","));
        }
        ExpectPunct(")");
        return MakeShapeExpr(v);
      }
      if (t.text == "prim" && IsPunct("(", 1)) {
        Next();
        Next();
        PrimExpr v = ParsePrimExpr();
        ExpectPunct(")");
        return MakePrimValue(v);
      }
      if (t.text == "extern" && IsPunct("(", 1)) {
        Next();
        Next();
        if (Peek().kind != Tok::kString) Expected("an extern symbol string");
        std::string sym = Next().text;
        ExpectPunct(")");
        Expr f = MakeExternFunc(sym);
        if (IsPunct("(")) return finish_call(f);
        return f;
      }
      if (t.text == "if") {
        Next();
        auto n = std::make_shared<IfNode>();
        n->cond = ParseExpr();
        ExpectIdent("then");
        n->then_branch = ParseBranch();
        ExpectIdent("else");
        n->else_branch = ParseBranch();
        n->sinfo = n->then_branch->sinfo;
        return n;
      }
      if (t.text == "match_cast") Fail(t, "match_cast is only allowed as the value of a binding");
      if (IsPunct("(", 1)) {
        if (!LookupOp(t.text)) Fail(t, "unknown op '" + t.text + "'");
        Next();
        return finish_call(GetOp(t.text));
      }
      break;
    }
    default:
      break;
  }
  Expected("an expression");
}

}  // namespace text
}  // namespace relax
