// IRModule bookkeeping and the text form of Relax functions and modules.
#include "relax/ir/module.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <sstream>
#include <unordered_map>

#include "relax/ir/text_format.h"
#include "relax/support/error.h"

namespace relax {

void IRModule::AddFunction(const std::string& name, Expr fn) {
  RELAX_ICHECK(fn && fn->kind == ExprKind::kFunction);
  if (std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);
  prim_funcs.erase(name);
  functions[name] = std::move(fn);
}
void IRModule::AddPrimFunc(const std::string& name, tir::PrimFunc fn) {
  if (std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);
  functions.erase(name);
  prim_funcs[name] = std::move(fn);
}
std::string IRModule::FreshName(const std::string& hint) const {
  std::string base = hint.empty() ? "f" : hint;
  if (!functions.count(base) && !prim_funcs.count(base)) return base;
  // Resume from the last suffix handed out for this hint: legalizing n ops of one kind is
  // O(n log n), not O(n^2).
  int& next = next_suffix[base];
  for (int i = std::max(next, 1);; ++i) {
    std::string n = base + "_" + std::to_string(i);
    if (!functions.count(n) && !prim_funcs.count(n)) {
      next = i + 1;
      return n;
    }
  }
}
const FunctionNode* IRModule::GetFunction(const std::string& name) const {
  auto it = functions.find(name);
  return it == functions.end() ? nullptr : As<FunctionNode>(it->second);
}

namespace {

constexpr int64_t kInlineConstLimit = 8;

class RelaxPrinter {
 public:
  std::string Name(const VarRef& v) {
    auto it = names_.find(v.get());
    if (it != names_.end()) return it->second;
    // Names are printed bare after '%': keep identifier characters only.
    std::string base;
    for (char ch : v->name)
      base += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') ? ch : '_';
    if (base.empty()) base = "v";
    std::string n = base;
    for (int i = 1; used_.count(n); ++i) n = base + "_" + std::to_string(i);
    used_.insert({n, 1});
    names_[v.get()] = n;
    return n;
  }

  static void PrintConstElement(std::ostream& os, DataType t, const uint8_t* p) {
    if (t == DataType::Float(32)) {
      float f;
      std::memcpy(&f, p, 4);
      os << ToString(FloatImm(f));
    } else if (t == DataType::Float(64)) {
      double d;
      std::memcpy(&d, p, 8);
      os << ToString(FloatImm(d, t));
    } else {
      // Integers (sign- or zero-extended) and other floats, bfloat16 and float8 included (raw
      // bits in hex).
      int nb = std::min(t.bytes(), 8);
      uint64_t u = 0;
      std::memcpy(&u, p, static_cast<size_t>(nb));  // little-endian host
      if (t.is_float() || t.is_bfloat16() || t.is_float8()) {
        char buf[32];
        snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(u));
        os << buf;
      } else if (t.is_int() && nb < 8) {
        int shift = 64 - 8 * nb;
        os << (static_cast<int64_t>(u << shift) >> shift);
      } else if (t.is_int()) {
        os << static_cast<int64_t>(u);
      } else {
        os << u;
      }
    }
  }

  void PrintConstValue(std::ostream& os, const ConstantNode* c) {
    os << "const[" << ToString(c->dtype) << ", (";
    for (size_t i = 0; i < c->shape.size(); ++i) os << (i ? ", " : "") << c->shape[i];
    if (c->shape.size() == 1) os << ",";
    os << ")";
    int64_t numel = c->numel();
    int64_t bytes = c->dtype.bytes();
    if (numel <= kInlineConstLimit && c->data &&
        static_cast<int64_t>(c->data->size()) >= numel * bytes) {
      os << ", {";
      const uint8_t* p = c->data->data();
      for (int64_t i = 0; i < numel; ++i) {
        os << (i ? ", " : "");
        PrintConstElement(os, c->dtype, p + i * bytes);
      }
      os << "}]";
    } else {
      char buf[32];
      snprintf(buf, sizeof(buf), "0x%016llx", static_cast<unsigned long long>(c->digest));
      os << ", digest=" << buf << "]";
    }
  }

  void PrintExpr(std::ostream& os, const Expr& e) {
    if (!e) {
      os << "<null>";
      return;
    }
    switch (e->kind) {
      case ExprKind::kVar:
      case ExprKind::kDataflowVar:
        os << "%" << Name(std::static_pointer_cast<const VarNode>(e));
        break;
      case ExprKind::kConstant:
        PrintConstValue(os, As<ConstantNode>(e));
        break;
      case ExprKind::kTuple: {
        os << "(";
        const auto& f = As<TupleNode>(e)->fields;
        for (size_t i = 0; i < f.size(); ++i) {
          os << (i ? ", " : "");
          PrintExpr(os, f[i]);
        }
        if (f.size() == 1) os << ",";
        os << ")";
        break;
      }
      case ExprKind::kTupleGetItem:
        PrintExpr(os, As<TupleGetItemNode>(e)->tuple);
        os << "." << As<TupleGetItemNode>(e)->index;
        break;
      case ExprKind::kShapeExpr: {
        os << "shape(";
        const auto& v = As<ShapeExprNode>(e)->values;
        for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << ToString(v[i]);
        os << ")";
        break;
      }
      case ExprKind::kPrimValue:
        os << "prim(" << ToString(As<PrimValueNode>(e)->value) << ")";
        break;
      case ExprKind::kStringImm:
        os << text::Quote(As<StringImmNode>(e)->value);
        break;
      case ExprKind::kOp:
        os << As<OpNode>(e)->name;
        break;
      case ExprKind::kGlobalVar:
        os << "@" << As<GlobalVarNode>(e)->name;
        break;
      case ExprKind::kExternFunc:
        os << "extern(" << text::Quote(As<ExternFuncNode>(e)->symbol) << ")";
        break;
      case ExprKind::kCall: {
        const CallNode* c = As<CallNode>(e);
        PrintExpr(os, c->op);
        os << "(";
        for (size_t i = 0; i < c->args.size(); ++i) {
          os << (i ? ", " : "");
          PrintExpr(os, c->args[i]);
        }
        os << ")";
        if (!c->sinfo_args.empty()) {
          os << " -> [";
          for (size_t i = 0; i < c->sinfo_args.size(); ++i)
            os << (i ? ", " : "") << ToString(c->sinfo_args[i]);
          os << "]";
        }
        PrintAttrs(os, c->attrs);
        break;
      }
      case ExprKind::kIf: {
        const IfNode* n = As<IfNode>(e);
        os << "if ";
        PrintExpr(os, n->cond);
        os << " then ";
        PrintBranch(os, n->then_branch);
        os << " else ";
        PrintBranch(os, n->else_branch);
        break;
      }
      case ExprKind::kSeqExpr:
        PrintBranch(os, e);
        break;
      case ExprKind::kFunction:
        PrintFunction(os, "anonymous", As<FunctionNode>(e));
        break;
    }
  }

  static void PrintAttrs(std::ostream& os, const Attrs& attrs) {
    if (attrs.empty()) return;
    os << " {";
    bool first = true;
    for (const auto& [k, v] : attrs) {
      os << (first ? "" : ", ") << text::FormatKey(k) << " = ";
      first = false;
      if (auto* i = std::get_if<int64_t>(&v))
        os << *i;
      else if (auto* d = std::get_if<double>(&v))
        os << ToString(FloatImm(*d, DataType::Float(64)));
      else if (auto* s = std::get_if<std::string>(&v))
        os << text::Quote(*s);
      else if (auto* l = std::get_if<std::vector<int64_t>>(&v)) {
        os << "[";
        for (size_t j = 0; j < l->size(); ++j) os << (j ? ", " : "") << (*l)[j];
        os << "]";
      }
    }
    os << "}";
  }

  // A SeqExpr nested in an expression (If branch): `{ bindings return x }`, indented one
  // level deeper than the enclosing binding; other expressions print inline.
  void PrintBranch(std::ostream& os, const Expr& e) {
    const SeqExprNode* s = As<SeqExprNode>(e);
    if (!s) {
      PrintExpr(os, e);
      return;
    }
    os << "{\n";
    int saved = indent_;
    indent_ += 2;
    PrintSeq(os, s, indent_);
    indent_ = saved;
    os << std::string(indent_, ' ') << "}";
  }

  void PrintSeq(std::ostream& os, const SeqExprNode* s, int ind) {
    std::string pad(ind, ' ');
    int saved = indent_;
    for (const auto& b : s->blocks) {
      int bi = ind;
      if (b.is_dataflow) {
        os << pad << "dataflow {\n";
        bi += 2;
      }
      std::string bpad(bi, ' ');
      indent_ = bi;
      for (const auto& bind : b.bindings) {
        os << bpad;
        // Inside a dataflow block, a non-dataflow var is an output of the block.
        if (b.is_dataflow && bind.var->kind == ExprKind::kVar) os << "output ";
        os << "%" << Name(bind.var) << ": " << ToString(bind.var->sinfo) << " = ";
        if (bind.match_sinfo) {
          os << "match_cast(";
          PrintExpr(os, bind.value);
          os << ", " << ToString(bind.match_sinfo) << ")";
        } else {
          PrintExpr(os, bind.value);
        }
        os << "\n";
      }
      if (b.is_dataflow) os << pad << "}\n";
    }
    indent_ = ind;
    os << pad << "return ";
    PrintExpr(os, s->body);
    os << "\n";
    indent_ = saved;
  }

  void PrintFunction(std::ostream& os, const std::string& name, const FunctionNode* f) {
    os << "func @" << name << "(";
    for (size_t i = 0; i < f->params.size(); ++i) {
      os << (i ? ", " : "") << "%" << Name(f->params[i]) << ": " << ToString(f->params[i]->sinfo);
      if (i < f->param_defaults.size() && f->param_defaults[i]) {
        os << " = ";
        PrintExpr(os, f->param_defaults[i]);
      }
    }
    os << ") -> " << ToString(f->ret_sinfo);
    PrintAttrs(os, f->attrs);
    os << " {\n";
    if (const SeqExprNode* s = As<SeqExprNode>(f->body)) {
      PrintSeq(os, s, 2);
    } else {
      os << "  return ";
      PrintExpr(os, f->body);
      os << "\n";
    }
    os << "}\n";
  }

 private:
  std::unordered_map<const void*, std::string> names_;
  std::unordered_map<std::string, int> used_;
  int indent_ = 0;
};

}  // namespace

std::string ToString(const Expr& e) {
  std::ostringstream os;
  RelaxPrinter p;
  p.PrintExpr(os, e);
  return os.str();
}

std::string ToString(const IRModule& m) {
  std::ostringstream os;
  if (!m.attrs.empty()) {
    os << "module attributes {";
    bool first = true;
    for (const auto& [k, v] : m.attrs) {
      os << (first ? "" : ", ") << text::FormatKey(k) << " = " << text::Quote(v);
      first = false;
    }
    os << "}\n\n";
  }
  for (const auto& name : m.order) {
    if (auto it = m.functions.find(name); it != m.functions.end()) {
      RelaxPrinter p;
      p.PrintFunction(os, name, As<FunctionNode>(it->second));
    } else if (auto pit = m.prim_funcs.find(name); pit != m.prim_funcs.end()) {
      os << tir::ToString(pit->second);
    }
    os << "\n";
  }
  return os.str();
}

}  // namespace relax
