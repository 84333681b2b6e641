// TIR statement constructors and the text form of statements and PrimFuncs.
#include "relax/ir/tir.h"

#include <sstream>

#include "relax/ir/struct_info.h"
#include "relax/ir/text_format.h"

namespace relax::tir {

Stmt For(Var v, PrimExpr min, PrimExpr extent, ForKind k, Stmt body, std::string thread_tag,
         IterKind iter_kind) {
  return std::make_shared<ForNode>(std::move(v), std::move(min), std::move(extent), k,
                                   std::move(thread_tag), std::move(body), iter_kind);
}
Stmt Store(Buffer b, std::vector<PrimExpr> indices, PrimExpr value) {
  return std::make_shared<BufferStoreNode>(std::move(b), std::move(indices), std::move(value));
}
Stmt Let(Var v, PrimExpr value, Stmt body) {
  return std::make_shared<LetStmtNode>(std::move(v), std::move(value), std::move(body));
}
Stmt IfThenElse(PrimExpr cond, Stmt then_s, Stmt else_s) {
  return std::make_shared<IfThenElseNode>(std::move(cond), std::move(then_s), std::move(else_s));
}
Stmt Seq(std::vector<Stmt> stmts) {
  if (stmts.size() == 1) return stmts[0];
  return std::make_shared<SeqStmtNode>(std::move(stmts));
}
Stmt Allocate(Buffer b, Stmt body) {
  return std::make_shared<AllocateNode>(std::move(b), std::move(body));
}
Stmt Evaluate(PrimExpr value) { return std::make_shared<EvaluateNode>(std::move(value)); }

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
    case StmtKind::kFor: {
      const auto* n = As<ForNode>(s);
      os << pad << "for " << VarName(n->loop_var);
      if (n->loop_var.dtype() != DataType::Index()) os << ": " << ToString(n->loop_var.dtype());
      os << " in " << ForKindName(n->for_kind) << "(" << ToString(n->min) << ", "
         << ToString(n->extent);
      if (!n->thread_tag.empty()) os << ", " << text::Quote(n->thread_tag);
      os << ")" << (n->iter_kind == IterKind::kReduction ? " reduce" : "");
      if (n->has_captures) {
        os << " captures(vars(";
        for (size_t i = 0; i < n->captured_vars.size(); ++i)
          os << (i ? ", " : "") << VarName(n->captured_vars[i]);
        os << "), buffers(";
        for (size_t i = 0; i < n->captured_buffers.size(); ++i)
          os << (i ? ", " : "") << n->captured_buffers[i]->name;
        os << "))";
      }
      os << " {\n";
      PrintStmt(os, n->body, ind + 2);
      os << pad << "}\n";
      break;
    }
    case StmtKind::kStore: {
      const auto* n = As<BufferStoreNode>(s);
      os << pad << n->buffer->name << "[";
      for (size_t i = 0; i < n->indices.size(); ++i)
        os << (i ? ", " : "") << ToString(n->indices[i]);
      os << "] = " << ToString(n->value) << "\n";
      break;
    }
    case StmtKind::kLet: {
      const auto* n = As<LetStmtNode>(s);
      os << pad << "let " << VarName(n->var) << ": " << ToString(n->var.dtype()) << " = "
         << ToString(n->value) << " {\n";
      PrintStmt(os, n->body, ind + 2);
      os << pad << "}\n";
      break;
    }
    case StmtKind::kIf: {
      const auto* n = As<IfThenElseNode>(s);
      os << pad << "if " << ToString(n->condition) << " {\n";
      PrintStmt(os, n->then_case, ind + 2);
      if (n->else_case) {
        os << pad << "} else {\n";
        PrintStmt(os, n->else_case, ind + 2);
      }
      os << pad << "}\n";
      break;
    }
    case StmtKind::kSeq:
      for (const auto& c : As<SeqStmtNode>(s)->seq) PrintStmt(os, c, ind);
      break;
    case StmtKind::kAllocate: {
      const auto* n = As<AllocateNode>(s);
      os << pad << "alloc " << n->buffer->name << ": Buffer[" << ToString(n->buffer->dtype)
         << ", (";
      for (size_t i = 0; i < n->buffer->shape.size(); ++i)
        os << (i ? ", " : "") << ToString(n->buffer->shape[i]);
      os << "), " << text::Quote(n->buffer->scope) << "] {\n";
      PrintStmt(os, n->body, ind + 2);
      os << pad << "}\n";
      break;
    }
    case StmtKind::kEvaluate:
      os << pad << "evaluate " << ToString(As<EvaluateNode>(s)->value) << "\n";
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
  for (const auto& v : f->scalar_params) os << ", " << VarName(v) << ": " << ToString(v.dtype());
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
