// TIR statement constructors and the text form of statements and PrimFuncs.
#include "relax/ir/tir.h"

#include <sstream>

#include "lexer.h"
#include "relax/ir/struct_info.h"

namespace relax::tir {

namespace {
std::shared_ptr<StmtNode> New(StmtKind k) {
  auto n = std::make_shared<StmtNode>();
  n->kind = k;
  return n;
}
}  // namespace

Stmt For(Var v, PrimExpr min, PrimExpr extent, ForKind k, Stmt body) {
  auto n = New(StmtKind::kFor);
  n->var = std::move(v);
  n->min = std::move(min);
  n->extent = std::move(extent);
  n->for_kind = k;
  n->body = {std::move(body)};
  return n;
}
Stmt Store(Buffer b, std::vector<PrimExpr> indices, PrimExpr value) {
  auto n = New(StmtKind::kStore);
  n->buffer = std::move(b);
  n->indices = std::move(indices);
  n->value = std::move(value);
  return n;
}
Stmt Let(Var v, PrimExpr value, Stmt body) {
  auto n = New(StmtKind::kLet);
  n->var = std::move(v);
  n->value = std::move(value);
  n->body = {std::move(body)};
  return n;
}
Stmt IfThenElse(PrimExpr cond, Stmt then_s, Stmt else_s) {
  auto n = New(StmtKind::kIf);
  n->cond = std::move(cond);
  n->body = {std::move(then_s)};
  if (else_s) n->body.push_back(std::move(else_s));
  return n;
}
Stmt Seq(std::vector<Stmt> stmts) {
  if (stmts.size() == 1) return stmts[0];
  auto n = New(StmtKind::kSeq);
  n->body = std::move(stmts);
  return n;
}
Stmt Allocate(Buffer b, Stmt body) {
  auto n = New(StmtKind::kAllocate);
  n->buffer = std::move(b);
  n->body = {std::move(body)};
  return n;
}
Stmt Evaluate(PrimExpr value) {
  auto n = New(StmtKind::kEvaluate);
  n->value = std::move(value);
  return n;
}

const char* ForKindName(ForKind k) {
  switch (k) {
    case ForKind::kSerial:
      return "serial";
    case ForKind::kParallel:
      return "parallel";
    case ForKind::kVectorized:
      return "vectorized";
    case ForKind::kUnrolled:
      return "unrolled";
    case ForKind::kThreadBinding:
      return "thread_binding";
  }
  return "?";
}

namespace {
void PrintStmt(std::ostream& os, const Stmt& s, int ind) {
  std::string pad(ind, ' ');
  if (!s) return;
  switch (s->kind) {
    case StmtKind::kFor:
      os << pad << "for " << s->var->name;
      if (s->var.dtype() != DataType::Index()) os << ": " << ToString(s->var.dtype());
      os << " in " << ForKindName(s->for_kind) << "(" << ToString(s->min) << ", "
         << ToString(s->extent);
      if (!s->thread_tag.empty()) os << ", " << text::Quote(s->thread_tag);
      os << ") {\n";
      PrintStmt(os, s->body[0], ind + 2);
      os << pad << "}\n";
      break;
    case StmtKind::kStore:
      os << pad << s->buffer->name << "[";
      for (size_t i = 0; i < s->indices.size(); ++i)
        os << (i ? ", " : "") << ToString(s->indices[i]);
      os << "] = " << ToString(s->value) << "\n";
      break;
    case StmtKind::kLet:
      os << pad << "let " << s->var->name << ": " << ToString(s->var.dtype()) << " = "
         << ToString(s->value) << " {\n";
      PrintStmt(os, s->body[0], ind + 2);
      os << pad << "}\n";
      break;
    case StmtKind::kIf:
      os << pad << "if " << ToString(s->cond) << " {\n";
      PrintStmt(os, s->body[0], ind + 2);
      if (s->body.size() > 1) {
        os << pad << "} else {\n";
        PrintStmt(os, s->body[1], ind + 2);
      }
      os << pad << "}\n";
      break;
    case StmtKind::kSeq:
      for (const auto& c : s->body) PrintStmt(os, c, ind);
      break;
    case StmtKind::kAllocate:
      os << pad << "alloc " << s->buffer->name << ": Buffer[" << ToString(s->buffer->dtype)
         << ", (";
      for (size_t i = 0; i < s->buffer->shape.size(); ++i)
        os << (i ? ", " : "") << ToString(s->buffer->shape[i]);
      os << "), " << text::Quote(s->buffer->scope) << "] {\n";
      PrintStmt(os, s->body[0], ind + 2);
      os << pad << "}\n";
      break;
    case StmtKind::kEvaluate:
      os << pad << "evaluate " << ToString(s->value) << "\n";
      break;
  }
}
}  // namespace

std::string ToString(const Stmt& s, int indent) {
  std::ostringstream os;
  PrintStmt(os, s, indent);
  return os.str();
}

std::string ToString(const PrimFunc& f) {
  std::ostringstream os;
  os << "prim_func @" << f->name << "(";
  for (size_t i = 0; i < f->buffers.size(); ++i) {
    const Buffer& b = f->buffers[i];
    os << (i ? ", " : "") << b->name << ": Buffer[" << ToString(b->dtype) << ", (";
    for (size_t j = 0; j < b->shape.size(); ++j) os << (j ? ", " : "") << ToString(b->shape[j]);
    os << ")";
    if (b->scope != "global") os << ", " << text::Quote(b->scope);
    // After flattening: the N-D shape the runtime tensor has (binds symbolic dims).
    if (i < f->param_shapes.size()) {
      os << ", nd=(";
      const auto& nd = f->param_shapes[i];
      for (size_t j = 0; j < nd.size(); ++j) os << (j ? ", " : "") << ToString(nd[j]);
      os << ")";
    }
    os << "]";
  }
  for (const auto& v : f->scalar_params) os << ", " << v->name << ": " << ToString(v.dtype());
  os << ") num_outputs=" << f->num_outputs;
  if (!f->attrs.empty()) {
    os << " attrs {";
    bool first = true;
    for (const auto& [k, v] : f->attrs) {
      os << (first ? "" : ", ") << text::FormatKey(k) << " = " << text::Quote(v);
      first = false;
    }
    os << "}";
  }
  os << " {\n" << ToString(f->body, 2) << "}\n";
  return os.str();
}

}  // namespace relax::tir
