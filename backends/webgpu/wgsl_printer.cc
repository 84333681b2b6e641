// TIR -> WGSL: one device kernel of the host/device split as one WGSL module (see
// webgpu_backend.h for the representation; docs/design.md, "WebGPU"). Statements print as
// WGSL statements (loops as `for` over i32, lets as `let`, thread-bound loops as guarded
// builtins), expressions as fully parenthesized WGSL expressions. Alongside, it tracks which
// values may differ between the invocations of a workgroup, so that a barrier under such a
// condition is refused here with the condition named (WGSL's uniformity analysis would reject
// the module in the browser).
#include <cmath>
#include <cstring>
#include <map>
#include <sstream>

#include "relax/codegen/device_kernels.h"
#include "relax/ir/tir_functor.h"
#include "relax/support/error.h"
#include "webgpu_backend.h"
#include "wgsl_storage.h"

namespace relax::backends::webgpu {

namespace {

// `unrolled` loops with a constant trip count up to this are printed once per iteration.
constexpr int64_t kMaxUnroll = 16;

std::string Sanitize(const std::string& name) {
  std::string s;
  for (char c : name) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s.empty() ? "x" : s;
}

std::string FloatLiteral(double v) {
  // (a constant expression that is not finite is a shader-creation error: wgsl_helpers.cc)
  if (std::isnan(v)) return "relax_nanf()";
  const float f = static_cast<float>(v);
  if (std::isinf(f)) return f > 0 ? "relax_inff()" : "(-relax_inff())";
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if (f == 0.0f || std::fpclassify(f) == FP_SUBNORMAL) {
    std::ostringstream os;
    os << "bitcast<f32>(0x" << std::hex << bits << "u)";
    return os.str();
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9gf", f);
  return buf;
}

class WgslPrinter {
 public:
  explicit WgslPrinter(const tir::PrimFunc& f) : f_(f), name_(f->name) {}

  WgslKernel Print() {
    // The launch-table entry parses the kernel's `block` and `access` attributes.
    const runtime::KernelSpec spec = codegen::KernelSpecOf(f_);
    for (int d = 0; d < 3; ++d) block_[d] = spec.block[d];
    std::ostringstream decls;
    WgslKernel k;
    k.storage_buffers = static_cast<int>(f_->buffers.size());
    for (int d = 0; d < 3; ++d) k.block[d] = block_[d];
    std::ostringstream accessors;
    for (size_t i = 0; i < f_->buffers.size(); ++i) {
      const Buffer& b = f_->buffers[i];
      const bool written = spec.params[i] != runtime::KernelParamKind::kBufferRead;
      std::string n = "b" + std::to_string(i) + "_" + Sanitize(b->name);
      bufs_[b.get()] = {n, /*param=*/true, written};
      decls << StorageBufferDecl(static_cast<int>(i), n, b->dtype, written, name_);
      accessors << StorageAccessors(n, b->dtype, written, name_);
    }
    k.scalars = static_cast<int>(f_->scalar_params.size());
    std::ostringstream entry;
    if (k.scalars) {
      // One uniform struct of i32s, padded to 16 bytes.
      decls << "struct Scalars {";
      const int padded = (k.scalars + 3) / 4 * 4;
      for (int i = 0; i < padded; ++i)
        decls << (i ? ", " : " ") << (i < k.scalars ? "s" : "pad") << i << ": i32";
      decls << " }\n@group(0) @binding(" << f_->buffers.size()
            << ") var<uniform> scalars: Scalars;\n";
      for (int i = 0; i < k.scalars; ++i) {
        const PrimExpr& v = f_->scalar_params[static_cast<size_t>(i)];
        std::string n = Bind(v);
        entry << "  let " << n << " = "
              << CastText("scalars.s" + std::to_string(i), DataType::Int(32), v.dtype(), name_)
              << ";\n";
      }
    }
    body_ << entry.str();
    indent_ = 1;
    Stmt(f_->body);
    std::ostringstream os;
    os << "// relaxc: device kernel " << name_ << "\n" << decls.str() << workgroup_.str();
    Need(accessors.str());  // float64 accessors convert through helpers
    std::set<std::string> helpers = HelperClosure();
    for (const auto& h : helpers) os << WgslHelper(h);
    os << accessors.str();
    os << "@compute @workgroup_size(" << block_[0] << ", " << block_[1] << ", " << block_[2]
       << ")\nfn main(@builtin(workgroup_id) wid: vec3<u32>, "
          "@builtin(local_invocation_id) lid: vec3<u32>, "
          "@builtin(num_workgroups) nwg: vec3<u32>) {\n"
       << body_.str() << "}\n";
    k.source = os.str();
    k.workgroup_bytes = workgroup_bytes_;
    k.function_bytes = function_bytes_;
    k.helpers = std::move(helpers);
    return k;
  }

 private:
  struct BufInfo {
    std::string name;
    bool param = false;    // a kernel parameter (storage buffer) vs a local/shared array
    bool written = false;  // storage buffers: read_write
  };

  std::string Bind(const PrimExpr& v) {
    std::string n = "v" + std::to_string(next_id_++) + "_" + Sanitize(VarName(v));
    vars_[v.get()] = n;
    return n;
  }

  void Line(const std::string& s) { body_ << std::string(2 * indent_, ' ') << s << "\n"; }

  // ---- uniformity -------------------------------------------------------------------
  // True when `e` has the same value in every invocation of a workgroup: it reads only
  // constants, scalars, block indices and lets of such (buffer loads count as varying).
  bool Uniform(const PrimExpr& e) const {
    struct Finder : tir::ExprVisitor {
      const std::set<const PrimExprNode*>* varying;
      bool uniform = true;
      using tir::ExprVisitor::VisitExpr;
      void VisitExpr_(const tir::VarNode* op, const PrimExpr& x) override {
        if (varying->count(op)) uniform = false;
        tir::ExprVisitor::VisitExpr_(op, x);
      }
      void VisitExpr_(const tir::BufferLoadNode* op, const PrimExpr& x) override {
        uniform = false;
        tir::ExprVisitor::VisitExpr_(op, x);
      }
    } finder;
    finder.varying = &varying_;
    finder.VisitExpr(e);
    return finder.uniform;
  }

  // Runs `body` under a condition: `cond` (printed text, for the error) varies when
  // `uniform` is false.
  template <typename F>
  void Under(bool uniform, const std::string& cond, F body) {
    if (!uniform) varying_conditions_.push_back(cond);
    body();
    if (!uniform) varying_conditions_.pop_back();
  }

  // ---- statements -------------------------------------------------------------------
  void Stmt(const tir::Stmt& s) {
    if (const auto* op = tir::As<tir::SeqStmtNode>(s)) {
      for (const auto& c : op->seq) Stmt(c);
    } else if (const auto* op = tir::As<tir::ForNode>(s)) {
      For(op);
    } else if (const auto* op = tir::As<tir::BufferStoreNode>(s)) {
      RELAX_ICHECK(op->indices.size() == 1);
      Line(StoreText(op->buffer, Expr(op->indices[0]), Expr(op->value)) + ";");
    } else if (const auto* op = tir::As<tir::LetStmtNode>(s)) {
      std::string value = Expr(op->value);
      if (!Uniform(op->value)) varying_.insert(op->var.get());
      Line("let " + Bind(op->var) + " = " + value + ";");
      Stmt(op->body);
    } else if (const auto* op = tir::As<tir::IfThenElseNode>(s)) {
      std::string cond = Expr(op->condition);
      Under(Uniform(op->condition), ToString(op->condition), [&] {
        Line("if (" + cond + ") {");
        Nested(op->then_case);
        if (op->else_case) {
          Line("} else {");
          Nested(op->else_case);
        }
        Line("}");
      });
    } else if (const auto* op = tir::As<tir::AllocateNode>(s)) {
      Allocate(op);
    } else if (const auto* op = tir::As<tir::EvaluateNode>(s)) {
      const auto* call = op->value.as<tir::CallNode>();
      if (call && call->op == "barrier") {
        if (!varying_conditions_.empty())
          RELAX_THROW("device kernel '"
                      << name_ << "': T.barrier() under '" << varying_conditions_.back()
                      << "', which differs between the invocations of a workgroup; WGSL "
                         "allows workgroupBarrier() only in uniform control flow");
        Line("workgroupBarrier();");
        return;
      }
      Line("_ = " + Expr(op->value) + ";");
    } else {
      RELAX_THROW("device kernel '" << name_ << "': unknown statement");
    }
  }

  void Nested(const tir::Stmt& s) {
    ++indent_;
    Stmt(s);
    --indent_;
  }

  void For(const tir::ForNode* op) {
    if (op->for_kind == tir::ForKind::kThreadBinding) return ThreadBound(op);
    int64_t mn, ext;
    if (op->for_kind == tir::ForKind::kUnrolled && op->min.AsInt(&mn) && op->extent.AsInt(&ext) &&
        ext >= 0 && ext <= kMaxUnroll) {
      for (int64_t i = 0; i < ext; ++i) {
        Line("{");
        ++indent_;
        Line("let " + Bind(op->loop_var) + " = " + IntLiteral(mn + i, op->loop_var.dtype()) + ";");
        Stmt(op->body);
        --indent_;
        Line("}");
      }
      return;
    }
    // Every other kind runs serially in one invocation.
    const bool uniform = Uniform(op->min) && Uniform(op->extent);
    std::string lo = Expr(op->min), ext_text = Expr(op->extent);
    std::string t = ReprOf(op->loop_var.dtype(), name_).compute;
    std::string iv = Bind(op->loop_var);
    if (!uniform) varying_.insert(op->loop_var.get());
    Line("{");
    ++indent_;
    Line("let " + iv + "_end = " + lo + " + " + ext_text + ";");
    Line("for (var " + iv + ": " + t + " = " + lo + "; " + iv + " < " + iv + "_end; " + iv + " = " +
         iv + " + 1" + (t == "u32" ? "u" : "i") + ") {");
    Under(uniform, "the bounds of loop '" + VarName(op->loop_var) + "'", [&] {
      ++indent_;
      Stmt(op->body);
      --indent_;
    });
    Line("}");
    --indent_;
    Line("}");
  }

  void ThreadBound(const tir::ForNode* op) {
    const std::string& tag = op->thread_tag;
    std::string id;
    bool uniform;
    int64_t known_extent = -1;  // the extent the launch guarantees (threadIdx: the block)
    auto axis = [&](char c) { return c == 'x' ? 0 : c == 'y' ? 1 : 2; };
    if (tag == "blockIdx.x") {
      // The linear block index: the runtime folds a grid beyond 65,535 into y and z.
      id = "i32((wid.z * nwg.y + wid.y) * nwg.x + wid.x)";
      uniform = true;
    } else if ((tag == "blockIdx.y" || tag == "blockIdx.z") && tag.size() == 10) {
      id = std::string("i32(wid.") + tag.back() + ")";
      uniform = true;
    } else if (tag.rfind("threadIdx.", 0) == 0 && tag.size() == 11 &&
               std::strchr("xyz", tag.back())) {
      id = std::string("i32(lid.") + tag.back() + ")";
      uniform = false;
      known_extent = block_[axis(tag.back())];
    } else {
      RELAX_THROW("device kernel '" << name_ << "': unknown thread tag '" << tag << "'");
    }
    int64_t ext = -1, mn = 0;
    const bool always = op->extent.AsInt(&ext) && ext == known_extent;
    std::string v = Bind(op->loop_var);
    if (!uniform) varying_.insert(op->loop_var.get());
    std::string raw = v + "_id";
    Line("let " + raw + " = " + id + ";");
    std::string value = raw;
    if (!op->min.AsInt(&mn) || mn != 0) value = "(" + raw + " + " + Expr(op->min) + ")";
    if (always) {
      Line("let " + v + " = " + value + ";");
      Stmt(op->body);
      return;
    }
    const bool guard_uniform = uniform && Uniform(op->extent);
    Line("if (" + raw + " < " + Expr(op->extent) + ") {");
    Under(guard_uniform, VarName(op->loop_var) + " < " + ToString(op->extent), [&] {
      ++indent_;
      Line("let " + v + " = " + value + ";");
      Stmt(op->body);
      --indent_;
    });
    Line("}");
  }

  void Allocate(const tir::AllocateNode* op) {
    const Buffer& buf = op->buffer;
    int64_t n;
    if (buf->shape.size() != 1 || !buf->shape[0].AsInt(&n) || n <= 0)
      RELAX_THROW("device kernel '" << name_ << "': buffer '" << buf->name << "' of scope '"
                                    << buf->scope << "' needs a constant size, got "
                                    << ToString(buf->shape[0]));
    std::string elem = LocalElementType(buf->dtype, name_);
    std::string name = "a" + std::to_string(next_id_++) + "_" + Sanitize(buf->name);
    bufs_[buf.get()] = {name, false, true};
    if (buf->scope == "shared") {
      workgroup_ << "var<workgroup> " << name << ": array<" << elem << ", " << n << ">;\n";
      workgroup_bytes_ += 4 * n;
      Stmt(op->body);
    } else if (buf->scope == "local") {
      function_bytes_ += 4 * n;
      Line("{");
      ++indent_;
      Line("var " + name + ": array<" + elem + ", " + std::to_string(n) + ">;");
      Stmt(op->body);
      --indent_;
      Line("}");
    } else {
      RELAX_THROW("device kernel '" << name_ << "': buffer '" << buf->name << "' of scope '"
                                    << buf->scope
                                    << "' cannot be allocated inside a device kernel");
    }
  }

  const BufInfo& Buf(const Buffer& b) {
    auto it = bufs_.find(b.get());
    if (it == bufs_.end())
      RELAX_THROW("device kernel '" << name_ << "': buffer '" << b->name << "' is not defined");
    return it->second;
  }

  std::string StoreText(const Buffer& b, const std::string& index, const std::string& value) {
    const BufInfo& info = Buf(b);
    if (info.param) return "st_" + info.name + "(" + index + ", " + value + ")";
    std::string v = b->dtype.is_bool() ? "select(0u, 1u, " + value + ")" : value;
    if (b->dtype.is_float() && b->dtype.bits == 16) v = Needed("relax_round_f16(" + v + ")");
    return info.name + "[" + index + "] = " + v;
  }

  // ---- expressions ------------------------------------------------------------------
  std::string IntLiteral(int64_t v, DataType t) {
    WgslRepr r = ReprOf(t, name_);
    if (r.compute == "bool") return v ? "true" : "false";
    if (r.compute == "f32") return Needed(FloatLiteral(static_cast<double>(v)));
    if (r.compute == "u32") {
      // Narrowed: values beyond u32 saturate (a bound such as INT64_MAX stays a bound).
      uint64_t u = v < 0 ? 0 : static_cast<uint64_t>(v);
      if (u > 0xffffffffull) u = 0xffffffffull;
      return std::to_string(u) + "u";
    }
    if (v >= INT32_MAX) return "2147483647i";
    if (v <= INT32_MIN) return "bitcast<i32>(0x80000000u)";
    return v < 0 ? "(" + std::to_string(v) + "i)" : std::to_string(v) + "i";
  }

  // The helpers `text` calls.
  static std::set<std::string> Uses(const std::string& text) {
    std::set<std::string> out;
    for (const std::string& n : WgslHelperNames())
      if (text.find(n + "(") != std::string::npos) out.insert(n);
    return out;
  }
  void Need(const std::string& text) {
    for (const auto& h : Uses(text)) helpers_.insert(h);
  }
  // The helpers used and the ones they call, in dependency order of definition (WGSL allows
  // any order at module scope).
  std::set<std::string> HelperClosure() const {
    std::set<std::string> out = helpers_;
    for (bool grew = true; grew;) {
      grew = false;
      for (const auto& h : std::set<std::string>(out))
        for (const auto& d : Uses(WgslHelper(h))) grew |= out.insert(d).second;
    }
    return out;
  }

  std::string Call(const std::string& fn, const std::vector<std::string>& args) {
    std::string s = fn + "(";
    for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
    s += ")";
    Need(s.substr(0, fn.size() + 1));
    return s;
  }

  std::string Expr(const PrimExpr& e) {
    const DataType t = e.dtype();
    if (const auto* n = e.as<tir::IntImmNode>()) return IntLiteral(n->value, t);
    if (const auto* n = e.as<tir::FloatImmNode>()) {
      ReprOf(t, name_);
      return Needed(FloatLiteral(n->value));
    }
    if (e.kind() == PrimKind::kVar) {
      auto it = vars_.find(e.get());
      if (it == vars_.end())
        RELAX_THROW("device kernel '" << name_ << "': variable '" << VarName(e) << "' is unbound");
      return it->second;
    }
    if (const auto* b = e.as<tir::BinaryOpNode>()) return Binary(b);
    if (const auto* n = e.as<tir::NotNode>()) return "!(" + Expr(n->a) + ")";
    if (const auto* s = e.as<tir::SelectNode>())
      return Call("select", {Expr(s->false_value), Expr(s->true_value), Expr(s->condition)});
    if (const auto* c = e.as<tir::CastNode>())
      return Needed(CastText(Expr(c->value), c->value.dtype(), t, name_));
    if (const auto* ld = e.as<tir::BufferLoadNode>()) {
      RELAX_ICHECK(ld->indices.size() == 1);
      const BufInfo& info = Buf(ld->buffer);
      std::string index = Expr(ld->indices[0]);
      if (info.param) return "ld_" + info.name + "(" + index + ")";
      if (ld->buffer->dtype.is_bool()) return "(" + info.name + "[" + index + "] != 0u)";
      return info.name + "[" + index + "]";
    }
    if (const auto* c = e.as<tir::CallNode>()) return Intrinsic(c);
    RELAX_THROW("device kernel '" << name_ << "': unsupported expression " << ToString(e));
  }

  std::string Needed(std::string s) {
    Need(s);
    return s;
  }

  std::string Binary(const tir::BinaryOpNode* op) {
    const DataType t = op->a.dtype();
    const std::string c = ReprOf(t, name_).compute;
    std::string a = Expr(op->a), b = Expr(op->b);
    // x != x (TIR's NaN test): WGSL lets a compiler assume no NaN and fold it to false; the
    // test on the bits holds.
    if (c == "f32" && a == b && (op->kind == PrimKind::kNE || op->kind == PrimKind::kEQ))
      return std::string(op->kind == PrimKind::kEQ ? "!" : "") + Call("relax_isnan", {a});
    auto infix = [&](const char* o) { return "(" + a + " " + o + " " + b + ")"; };
    // 8- and 16-bit integers compute in 32 bits: their sums and products wrap to the width.
    auto wrapped = [&](const char* o) {
      std::string r = infix(o);
      return (t.is_int() || t.is_uint()) && t.bits < 32 ? CastText(r, DataType::Int(32), t, name_)
                                                        : r;
    };
    switch (op->kind) {
      case PrimKind::kAdd:
        return wrapped("+");
      case PrimKind::kSub:
        return wrapped("-");
      case PrimKind::kMul:
        return wrapped("*");
      case PrimKind::kDiv:
        if (c != "f32")
          RELAX_THROW("device kernel '" << name_ << "': '/' on integers (use floordiv)");
        return infix("/");
      case PrimKind::kFloorDiv:
      case PrimKind::kFloorMod: {
        const bool div = op->kind == PrimKind::kFloorDiv;
        if (c == "u32") return Call(div ? "relax_div_u32" : "relax_mod_u32", {a, b});
        if (c != "i32")
          RELAX_THROW("device kernel '" << name_ << "': floordiv/floormod on " << ToString(t));
        return Call(div ? "relax_floordiv_i32" : "relax_floormod_i32", {a, b});
      }
      case PrimKind::kMin:
        return Call(c == "f32" ? "relax_fmin" : "min", {a, b});
      case PrimKind::kMax:
        return Call(c == "f32" ? "relax_fmax" : "max", {a, b});
      case PrimKind::kEQ:
        return infix("==");
      case PrimKind::kNE:
        return infix("!=");
      case PrimKind::kLT:
        return infix("<");
      case PrimKind::kLE:
        return infix("<=");
      case PrimKind::kGT:
        return infix(">");
      case PrimKind::kGE:
        return infix(">=");
      case PrimKind::kAnd:
        return infix(c == "bool" ? "&&" : "&");
      case PrimKind::kOr:
        return infix(c == "bool" ? "||" : "|");
      default:
        break;
    }
    RELAX_THROW("device kernel '" << name_ << "': unsupported operator in " << ToString(op->a));
  }

  std::string Intrinsic(const tir::CallNode* n) {
    const std::string& op = n->op;
    auto want = [&](size_t k) {
      if (n->args.size() != k)
        RELAX_THROW("device kernel '" << name_ << "': T." << op << " takes " << k
                                      << " arguments, got " << n->args.size());
    };
    std::vector<std::string> args;
    for (const auto& a : n->args) args.push_back(Expr(a));
    static const std::map<std::string, std::string> kUnary = {
        {"exp", "exp"},       {"sqrt", "sqrt"},       {"log", "log"},   {"sin", "sin"},
        {"cos", "cos"},       {"tan", "tan"},         {"atan", "atan"}, {"tanh", "relax_tanh"},
        {"erf", "relax_erf"}, {"round_even", "round"}};
    if (auto it = kUnary.find(op); it != kUnary.end()) {
      want(1);
      ReprOf(n->dtype, name_);
      if (!n->dtype.is_float())
        RELAX_THROW("device kernel '" << name_ << "': T." << op << " on " << ToString(n->dtype));
      return Call(it->second, args);
    }
    if (op == "pow" || op == "fmod") {
      want(2);
      ReprOf(n->dtype, name_);
      return Call(op == "pow" ? "relax_pow" : "relax_fmod", args);
    }
    if (op == "truncdiv" || op == "truncmod") {
      want(2);
      const std::string c = ReprOf(n->args[0].dtype(), name_).compute;
      if (c == "u32") return Call(op == "truncdiv" ? "relax_div_u32" : "relax_mod_u32", args);
      return Call(op == "truncdiv" ? "relax_truncdiv_i32" : "relax_truncmod_i32", args);
    }
    if (op == "reinterpret") {
      want(1);
      WgslRepr from = ReprOf(n->args[0].dtype(), name_), to = ReprOf(n->dtype, name_);
      if (from.compute == to.compute) return args[0];
      if (from.storage_bits == 32 && to.storage_bits == 32)
        return "bitcast<" + to.compute + ">(" + args[0] + ")";
      if (from.compute != "f32" && to.compute != "f32" && from.storage_bits == to.storage_bits)
        return CastText(args[0], n->args[0].dtype(), n->dtype, name_);  // the same bits
      if (from.is_half && to.compute == "i32")  // f16 -> its 16 bits, sign-extended
        return Needed("((bitcast<i32>(relax_f32_to_f16_bits(" + args[0] + ")) << 16u) >> 16u)");
      if (to.is_half && from.compute != "f32")
        return Needed("relax_f16_bits_to_f32(bitcast<u32>(" + args[0] + ") & 0xffffu)");
      RELAX_THROW("device kernel '" << name_ << "': T.reinterpret from "
                                    << ToString(n->args[0].dtype()) << " to "
                                    << ToString(n->dtype));
    }
    if (op == "barrier")
      RELAX_THROW("device kernel '" << name_ << "': T.barrier() inside an expression");
    RELAX_THROW("device kernel '" << name_ << "': intrinsic T." << op
                                  << " has no WGSL form (webgpu)");
  }

  tir::PrimFunc f_;
  std::string name_;
  int64_t block_[3] = {1, 1, 1};
  std::ostringstream body_, workgroup_;
  int indent_ = 1;
  int next_id_ = 0;
  int64_t workgroup_bytes_ = 0;
  int64_t function_bytes_ = 0;
  std::map<const PrimExprNode*, std::string> vars_;
  std::map<const BufferNode*, BufInfo> bufs_;
  std::set<const PrimExprNode*> varying_;
  std::vector<std::string> varying_conditions_;
  std::set<std::string> helpers_;
};

}  // namespace

WgslKernel PrintWgslKernel(const tir::PrimFunc& f) {
  if (!f->attrs.count("device_kernel"))
    RELAX_THROW("internal error: PrimFunc '" << f->name << "' is not a device kernel");
  return WgslPrinter(f).Print();
}

}  // namespace relax::backends::webgpu
