// Text IR parser, scalar and loop level: PrimExpr (with the printer's
// precedences), PrimFuncs with buffers, loops, let, if, alloc, stores.
#include <cmath>
#include <cstdlib>

#include "parser_internal.h"
#include "relax/support/error.h"

namespace relax::text {

namespace {
// Builds a node as printed (no folding: the text is the structure).
PrimExpr Node(PrimKind k, DataType t, std::vector<PrimExpr> ops) {
  return MakePrimNode(k, t, std::move(ops));
}

struct BinOp {
  const char* text;
  PrimKind kind;
  int prec;
};
constexpr BinOp kBinOps[] = {
    {"||", PrimKind::kOr, 1}, {"&&", PrimKind::kAnd, 2}, {"==", PrimKind::kEQ, 3},
    {"!=", PrimKind::kNE, 3}, {"<", PrimKind::kLT, 3},   {"<=", PrimKind::kLE, 3},
    {">", PrimKind::kGT, 3},  {">=", PrimKind::kGE, 3},  {"+", PrimKind::kAdd, 4},
    {"-", PrimKind::kSub, 4}, {"*", PrimKind::kMul, 5},  {"/", PrimKind::kDiv, 5},
};

bool IsBool(PrimKind k) {
  return k == PrimKind::kEQ || k == PrimKind::kNE || k == PrimKind::kLT || k == PrimKind::kLE ||
         k == PrimKind::kGT || k == PrimKind::kGE || k == PrimKind::kAnd || k == PrimKind::kOr;
}
}  // namespace

namespace {
constexpr int kMaxExprOps = 10000;
}  // namespace

PrimExpr Parser::ParsePrimExpr() {
  DepthGuard g(this);
  if (in_prim_expr_) return ParseBinaryRHS(1, ParseUnary());
  in_prim_expr_ = true;
  expr_ops_ = 0;
  struct Reset {
    bool* flag;
    ~Reset() { *flag = false; }
  } reset{&in_prim_expr_};
  return ParseBinaryRHS(1, ParseUnary());
}

PrimExpr Parser::ParseBinaryRHS(int min_prec, PrimExpr lhs) {
  while (true) {
    const BinOp* op = nullptr;
    if (Peek().kind == Tok::kPunct)
      for (const BinOp& b : kBinOps)
        if (Peek().text == b.text) op = &b;
    if (!op || op->prec < min_prec) return lhs;
    Next();
    PrimExpr rhs = ParseUnary();
    // Left associative: bind tighter operators on the right first.
    while (true) {
      const BinOp* next = nullptr;
      if (Peek().kind == Tok::kPunct)
        for (const BinOp& b : kBinOps)
          if (Peek().text == b.text) next = &b;
      if (!next || next->prec <= op->prec) break;
      DepthGuard g(this);
      rhs = ParseBinaryRHS(op->prec + 1, rhs);
    }
    if (++expr_ops_ > kMaxExprOps)
      Fail(Peek(),
           "expression too large (more than " + std::to_string(kMaxExprOps) + " binary operators)");
    lhs = Node(op->kind, IsBool(op->kind) ? DataType::Bool() : lhs.dtype(), {lhs, rhs});
  }
}

PrimExpr Parser::ParseUnary() {
  DepthGuard g(this);
  if (AcceptPunct("!")) {
    PrimExpr a = ParseUnary();
    return Node(PrimKind::kNot, DataType::Bool(), {a});
  }
  if (IsPunct("-")) {
    const Token& n = Peek(1);
    if (n.kind == Tok::kInt || n.kind == Tok::kFloat ||
        (n.kind == Tok::kIdent && (n.text == "inf" || n.text == "nan"))) {
      Next();
      return ParseNumber(true);
    }
    Expected("an expression");
  }
  return ParsePrimaryPrim();
}

PrimExpr Parser::ParseNumber(bool negative) {
  const Token t = Next();
  DataType dt;
  bool has_suffix = false;
  if (IsPunct(":") && Peek(1).kind == Tok::kIdent && ParseDataType(Peek(1).text, &dt)) {
    Next();
    Next();
    has_suffix = true;
  }
  if (t.kind == Tok::kInt && (!has_suffix || !dt.is_float())) {
    if (!has_suffix) dt = DataType::Index();
    uint64_t limit = negative ? (1ULL << 63) : static_cast<uint64_t>(INT64_MAX);
    if (t.uval > limit) Fail(t, "integer " + t.text + " does not fit in 64 bits");
    return IntImm(negative ? static_cast<int64_t>(0 - t.uval) : static_cast<int64_t>(t.uval), dt);
  }
  // Floats: no suffix = an f32 value; an explicit suffix keeps the full double.
  double v;
  if (t.kind == Tok::kIdent) {
    if (t.text != "inf" && t.text != "nan") Fail(t, "expected a number, found " + Describe(t));
    v = t.text == "nan" ? std::nan("") : INFINITY;
  } else if (!has_suffix) {
    v = static_cast<double>(std::strtof(t.text.c_str(), nullptr));
  } else {
    v = std::strtod(t.text.c_str(), nullptr);
  }
  if (!has_suffix) dt = DataType::Float(32);
  if (!dt.is_float()) Fail(t, "a float literal cannot have type " + ToString(dt));
  return FloatImm(negative ? -v : v, dt);
}

std::vector<PrimExpr> Parser::ParsePrimArgs() {
  ExpectPunct("(");
  std::vector<PrimExpr> args;
  if (!IsPunct(")")) {
    do {
      args.push_back(ParsePrimExpr());
    } while (AcceptPunct(","));
  }
  ExpectPunct(")");
  return args;
}

PrimExpr Parser::ResolvePrimVar(const Token& t) {
  for (auto it = prim_scopes_.rbegin(); it != prim_scopes_.rend(); ++it) {
    auto f = it->find(t.text);
    if (f != it->end()) return f->second;
  }
  if (define_prim_vars_ && !prim_scopes_.empty()) {
    Var v = MakeVar(t.text, DataType::Index());
    prim_scopes_.front()[t.text] = v;
    if (bb_) bb_->analyzer().Bind(v, 0);  // symbolic dims are sizes: >= 0
    return v;
  }
  Fail(t, "symbolic var '" + t.text + "' is used before it is defined");
}

std::pair<Buffer, std::vector<PrimExpr>> Parser::ParseBufferAccess() {
  Buffer b = LookupBuffer(Peek());
  Next();  // name
  Next();  // [
  std::vector<PrimExpr> idx;
  if (!IsPunct("]")) {
    do {
      idx.push_back(ParsePrimExpr());
    } while (AcceptPunct(","));
  }
  ExpectPunct("]");
  return {b, std::move(idx)};
}

Buffer Parser::LookupBuffer(const Token& t) {
  for (auto it = buffer_scopes_.rbegin(); it != buffer_scopes_.rend(); ++it) {
    auto f = it->find(t.text);
    if (f != it->end()) return f->second;
  }
  Fail(t, "undefined buffer '" + t.text + "'");
}

PrimExpr Parser::ParsePrimaryPrim() {
  DepthGuard g(this);
  const Token t = Peek();
  if (t.kind == Tok::kInt || t.kind == Tok::kFloat) return ParseNumber(false);
  if (AcceptPunct("(")) {
    PrimExpr e = ParsePrimExpr();
    ExpectPunct(")");
    return e;
  }
  if (t.kind != Tok::kIdent) Expected("an expression");
  if ((t.text == "inf" || t.text == "nan") && !IsPunct("(", 1)) return ParseNumber(false);
  bool call = IsPunct("(", 1);
  if (call) {
    static const std::pair<const char*, PrimKind> kFns[] = {{"floordiv", PrimKind::kFloorDiv},
                                                            {"floormod", PrimKind::kFloorMod},
                                                            {"min", PrimKind::kMin},
                                                            {"max", PrimKind::kMax},
                                                            {"select", PrimKind::kSelect}};
    for (const auto& [name, kind] : kFns) {
      if (t.text != name) continue;
      Next();
      std::vector<PrimExpr> args = ParsePrimArgs();
      size_t want = kind == PrimKind::kSelect ? 3 : 2;
      if (args.size() != want)
        Fail(t, std::string(name) + " takes " + std::to_string(want) + " arguments, got " +
                    std::to_string(args.size()));
      DataType dt = kind == PrimKind::kSelect ? args[1].dtype() : args[0].dtype();
      return Node(kind, dt, std::move(args));
    }
    if (t.text.rfind("T.", 0) == 0 && t.text.size() > 2) {
      Next();
      std::vector<PrimExpr> args = ParsePrimArgs();
      ExpectPunct(":");
      DataType dt = ParseDType();
      return CallIntrin(t.text.substr(2), std::move(args), dt);
    }
    if (t.text.rfind("reduce_", 0) == 0 && t.text.size() > 7) {
      Next();
      ExpectPunct("(");
      // Axis vars are defined by the axes list that follows the source: parse it first.
      size_t src_pos = pos_;
      int d = 0;
      while (true) {
        const Token& x = Peek();
        if (x.kind == Tok::kEOF || x.kind == Tok::kError) Expected("', axes=[...]'");
        if (x.kind == Tok::kPunct) {
          if (x.text == "(" || x.text == "[") ++d;
          if (x.text == ")" || x.text == "]") --d;
          if (d < 0) Expected("', axes=[...]'");
          if (d == 0 && x.text == "," && IsIdent("axes", 1)) break;
        }
        Next();
      }
      ExpectPunct(",");
      ExpectIdent("axes");
      ExpectPunct("=");
      ExpectPunct("[");
      std::vector<PrimExpr> axes, extents;
      std::map<std::string, PrimExpr> scope;
      while (!IsPunct("]")) {
        std::string name = ExpectName("an axis name");
        ExpectPunct(":");
        extents.push_back(ParsePrimExpr());
        Var v = MakeVar(name, DataType::Index());
        scope[name] = v;
        axes.push_back(v);
        if (!AcceptPunct(",")) break;
      }
      ExpectPunct("]");
      ExpectPunct(")");
      size_t end = pos_;
      pos_ = src_pos;
      prim_scopes_.push_back(scope);
      PrimExpr src = ParsePrimExpr();
      prim_scopes_.pop_back();
      pos_ = end;
      return MakeReduce(t.text.substr(7), src, std::move(axes), std::move(extents));
    }
    DataType cast_t;
    if (ParseDataType(t.text, &cast_t)) {
      Next();
      ExpectPunct("(");
      PrimExpr v = ParsePrimExpr();
      ExpectPunct(")");
      return Node(PrimKind::kCast, cast_t, {v});
    }
    Fail(t, "unknown function '" + t.text + "'");
  }
  if (IsPunct("[", 1)) {
    auto [b, idx] = ParseBufferAccess();
    return Load(b, std::move(idx));
  }
  Next();
  return ResolvePrimVar(t);
}

// ---- PrimFunc ---------------------------------------------------------------------

Buffer Parser::ParseBufferType(const std::string& name, std::vector<PrimExpr>* nd_shape,
                               bool* has_nd, bool allow_nd) {
  ExpectIdent("Buffer");
  ExpectPunct("[");
  DataType dt = ParseDType();
  ExpectPunct(",");
  std::vector<PrimExpr> shape = ParseDimList();
  std::string scope = "global";
  *has_nd = false;
  while (AcceptPunct(",")) {
    if (Peek().kind == Tok::kString) {
      scope = Next().text;
    } else if (allow_nd && IsIdent("nd")) {
      Next();
      ExpectPunct("=");
      *nd_shape = ParseDimList();
      *has_nd = true;
    } else {
      Expected(allow_nd ? "a scope string or 'nd=(...)'" : "a scope string");
    }
  }
  ExpectPunct("]");
  return MakeBuffer(name, dt, std::move(shape), scope);
}

tir::PrimFunc Parser::ParsePrimFunc(std::string* name) {
  ExpectIdent("prim_func");
  if (Peek().kind != Tok::kAt) Expected("a function name '@name'");
  *name = Next().text;
  auto f = std::make_shared<tir::PrimFuncNode>();
  f->name = *name;
  prim_scopes_.assign(1, {});
  buffer_scopes_.assign(1, {});
  ExpectPunct("(");
  define_prim_vars_ = true;
  bool any_nd = false;
  std::vector<std::vector<PrimExpr>> nd_shapes;
  if (!IsPunct(")")) {
    do {
      const Token nt = Peek();
      std::string pname = ExpectName("a parameter name");
      ExpectPunct(":");
      if (IsIdent("Buffer")) {
        if (!f->scalar_params.empty()) Fail(nt, "buffer parameters must come before scalars");
        if (buffer_scopes_[0].count(pname)) Fail(nt, "buffer '" + pname + "' is already defined");
        std::vector<PrimExpr> nd;
        bool has_nd = false;
        Buffer b = ParseBufferType(pname, &nd, &has_nd, true);
        if (has_nd != any_nd && !f->buffers.empty())
          Fail(nt, "either every buffer parameter has an nd=(...) shape or none has");
        any_nd = has_nd;
        nd_shapes.push_back(std::move(nd));
        buffer_scopes_[0][pname] = b;
        f->buffers.push_back(b);
      } else {
        DataType dt = ParseDType();
        if (prim_scopes_[0].count(pname)) Fail(nt, "scalar '" + pname + "' is already defined");
        Var v = MakeVar(pname, dt);
        prim_scopes_[0][pname] = v;
        f->scalar_params.push_back(v);
      }
    } while (AcceptPunct(","));
  }
  define_prim_vars_ = false;
  ExpectPunct(")");
  if (any_nd) f->param_shapes = std::move(nd_shapes);
  ExpectIdent("num_outputs");
  ExpectPunct("=");
  const Token nt = Peek();
  int64_t no = ParseSignedInt("an output count");
  if (no < 0 || no > static_cast<int64_t>(f->buffers.size()))
    Fail(nt, "num_outputs " + std::to_string(no) + " out of range");
  f->num_outputs = static_cast<int>(no);
  if (AcceptIdent("attrs")) ParseStringAttrs(&f->attrs);
  f->body = ParseStmtBlock();
  return f;
}

tir::Stmt Parser::ParseStmtBlock() {
  DepthGuard g(this);
  ExpectPunct("{");
  std::vector<tir::Stmt> stmts;
  while (!AcceptPunct("}")) stmts.push_back(ParseStmt());
  return tir::Seq(std::move(stmts));
}

tir::Stmt Parser::ParseStmt() {
  DepthGuard g(this);
  const Token t = Peek();
  if (t.kind != Tok::kIdent) Expected("a statement");
  auto with_scope = [&](const std::string& var, const PrimExpr& v, Buffer b) {
    prim_scopes_.push_back({});
    buffer_scopes_.push_back({});
    if (v.defined()) prim_scopes_.back()[var] = v;
    if (b) buffer_scopes_.back()[var] = b;
    tir::Stmt body = ParseStmtBlock();
    prim_scopes_.pop_back();
    buffer_scopes_.pop_back();
    return body;
  };
  if (t.text == "for" && Peek(1).kind == Tok::kIdent) {
    Next();
    std::string vname = Next().text;
    DataType vt = DataType::Index();
    if (AcceptPunct(":")) vt = ParseDType();
    ExpectIdent("in");
    const Token kt = Peek();
    std::string kname = ExpectName("a loop kind");
    tir::ForKind kind;
    if (kname == "serial")
      kind = tir::ForKind::kSerial;
    else if (kname == "parallel")
      kind = tir::ForKind::kParallel;
    else if (kname == "vectorized")
      kind = tir::ForKind::kVectorized;
    else if (kname == "unrolled")
      kind = tir::ForKind::kUnrolled;
    else if (kname == "thread_binding")
      kind = tir::ForKind::kThreadBinding;
    else
      Fail(kt, "unknown loop kind '" + kname + "'");
    ExpectPunct("(");
    PrimExpr min = ParsePrimExpr();
    ExpectPunct(",");
    PrimExpr extent = ParsePrimExpr();
    std::string tag;
    if (AcceptPunct(",")) {
      if (Peek().kind != Tok::kString) Expected("a thread tag string");
      tag = Next().text;
    }
    ExpectPunct(")");
    tir::IterKind iter = tir::IterKind::kSpatial;
    if (Peek().kind == Tok::kIdent && Peek().text == "reduce") {
      Next();
      iter = tir::IterKind::kReduction;
    }
    bool has_captures = false;
    std::vector<Var> cvars;
    std::vector<Buffer> cbufs;
    if (Peek().kind == Tok::kIdent && Peek().text == "captures") {
      Next();
      has_captures = true;
      ExpectPunct("(");
      ExpectIdent("vars");
      ExpectPunct("(");
      if (!IsPunct(")")) {
        do {
          if (Peek().kind != Tok::kIdent) Expected("a captured var");
          cvars.push_back(ResolvePrimVar(Next()));
        } while (AcceptPunct(","));
      }
      ExpectPunct(")");
      ExpectPunct(",");
      ExpectIdent("buffers");
      ExpectPunct("(");
      if (!IsPunct(")")) {
        do {
          if (Peek().kind != Tok::kIdent) Expected("a captured buffer");
          cbufs.push_back(LookupBuffer(Next()));
        } while (AcceptPunct(","));
      }
      ExpectPunct(")");
      ExpectPunct(")");
    }
    Var v = MakeVar(vname, vt);
    tir::Stmt body = with_scope(vname, v, nullptr);
    tir::Stmt loop = tir::For(v, min, extent, kind, body, tag, iter);
    if (has_captures) {
      auto n = std::make_shared<tir::ForNode>(*tir::As<tir::ForNode>(loop));
      n->has_captures = true;
      n->captured_vars = std::move(cvars);
      n->captured_buffers = std::move(cbufs);
      loop = n;
    }
    return loop;
  }
  if (t.text == "let" && Peek(1).kind == Tok::kIdent) {
    Next();
    std::string vname = Next().text;
    ExpectPunct(":");
    DataType vt = ParseDType();
    ExpectPunct("=");
    PrimExpr value = ParsePrimExpr();
    Var v = MakeVar(vname, vt);
    return tir::Let(v, value, with_scope(vname, v, nullptr));
  }
  if (t.text == "alloc" && Peek(1).kind == Tok::kIdent) {
    Next();
    std::string bname = Next().text;
    ExpectPunct(":");
    std::vector<PrimExpr> nd;
    bool has_nd = false;
    Buffer b = ParseBufferType(bname, &nd, &has_nd, false);
    return tir::Allocate(b, with_scope(bname, PrimExpr(), b));
  }
  if (t.text == "if" && !IsPunct("[", 1)) {
    Next();
    PrimExpr cond = ParsePrimExpr();
    tir::Stmt then_s = with_scope("", PrimExpr(), nullptr);
    tir::Stmt else_s;
    if (AcceptIdent("else")) else_s = with_scope("", PrimExpr(), nullptr);
    return tir::IfThenElse(cond, then_s, else_s);
  }
  if (t.text == "evaluate" && !IsPunct("[", 1)) {
    Next();
    return tir::Evaluate(ParsePrimExpr());
  }
  if (IsPunct("[", 1)) {
    auto [b, idx] = ParseBufferAccess();
    ExpectPunct("=");
    return tir::Store(b, std::move(idx), ParsePrimExpr());
  }
  Expected("a statement (for, let, alloc, if, evaluate or a store)");
}

}  // namespace relax::text
