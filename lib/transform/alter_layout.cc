// alter-layout (relax/transform/alter_layout.h).
#include "relax/transform/alter_layout.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "relax/ir/expr_functor.h"
#include "relax/op/layout.h"
#include "relax/op/op.h"
#include "relax/support/error.h"
#include "relax/transform/binding_emitter.h"

namespace relax {

namespace {

constexpr const char* kPlain = "NCHW";

const CallNode* OpCall(const Expr& e, const std::string& name) {
  const CallNode* c = As<CallNode>(e);
  const OpNode* op = c ? As<OpNode>(c->op) : nullptr;
  return op && op->name == name ? c : nullptr;
}

bool IsF32Tensor(const StructInfo& s, int ndim) {
  return s && s->kind == SIKind::kTensor && s->values && s->ndim == ndim &&
         s->dtype == DataType::Float(32);
}

// The vars an expression reads.
class UsedVars : public ExprVisitor {
 public:
  std::vector<const VarNode*> vars;
  void VisitExpr_(const VarNode* op, const Expr&) override { vars.push_back(op); }
};

Expr TransformConstant(const ConstantNode& k, const std::vector<int64_t>& shape,
                       const std::string& src, const std::string& dst) {
  std::vector<int64_t> out_shape;
  std::vector<uint8_t> bytes = TransformLayoutData(
      *k.data, k.dtype.bytes(), shape, Layout::Parse(src), Layout::Parse(dst), &out_shape);
  return MakeConstant(k.dtype, out_shape, std::move(bytes),
                      k.name.empty() ? "" : k.name + "_" + dst);
}

Attrs LayoutAttrs(const std::string& src, const std::string& dst) {
  return {{"src_layout", src}, {"dst_layout", dst}};
}

// A value computed in a blocked layout: `blocked` holds it as NCHW<block>c; `plain` is the
// original var, bound to the transform back when first needed.
struct Blocked {
  VarRef plain, blocked;
  int64_t block = 0;
  bool materialized = false;
  // A conv's output whose channels the block does not divide (YOLO's 255-channel heads, an
  // STFT's 258): the last block is padded. The padding lanes hold whatever the elementwise
  // ops make of zeros (a division by a zero-padded constant: NaN), so only elementwise ops read
  // such a value blocked; everything else gets the cropped NCHW value.
  int64_t padded_channels = 0;  // the logical channel count when padded, else 0
};

class LayoutAlterer : public ExprMutator {
 public:
  explicit LayoutAlterer(int64_t block) : block_(block) {}

  Expr VisitExpr_(const FunctionNode* op, const Expr& e) override {
    emit_.BeginFunction(e);
    return ExprMutator::VisitExpr_(op, e);
  }

  // Blocked values and transforms are per binding block: their vars are dataflow vars inside a
  // dataflow block (and plain vars elsewhere), which no other block may use.
  BindingBlock VisitBindingBlock(const BindingBlock& block) override {
    auto saved = std::make_tuple(std::move(blocked_), std::move(transformed_), dataflow_);
    blocked_.clear();
    transformed_.clear();
    dataflow_ = block.is_dataflow;
    BindingBlock out = ExprMutator::VisitBindingBlock(block);
    std::tie(blocked_, transformed_, dataflow_) = std::move(saved);
    return out;
  }

  void VisitBinding(const Binding& b, std::vector<Binding>* out) override {
    Expr value = VisitExpr(b.value);
    if (!b.match_sinfo && (AlterConv(b.var, value, out) || AlterElementwise(b.var, value, out) ||
                           AlterPoolOrConcat(b.var, value, out))) {
      // A var that outlives its block is bound right away.
      if (b.var->kind != ExprKind::kDataflowVar) Materialize(b.var.get(), out);
      return;
    }
    UsedVars used;
    used.VisitExpr(value);
    for (const VarNode* v : used.vars) Materialize(v, out);
    out->push_back({b.var, value, b.match_sinfo});
  }

 private:
  VarRef Emit(const Expr& call, const std::string& hint, std::vector<Binding>* out) {
    return emit_.Emit(call, hint, dataflow_, out);
  }

  // Binds the original var of a blocked value (the transform back to NCHW) once.
  void Materialize(const VarNode* v, std::vector<Binding>* out) {
    auto it = blocked_.find(v);
    if (it == blocked_.end() || it->second.materialized) return;
    Blocked& b = it->second;
    std::string src = SplitLayout(kPlain, 'C', b.block);
    Attrs attrs = LayoutAttrs(src, kPlain);
    if (b.padded_channels)
      attrs["dst_extents"] = std::vector<int64_t>{-1, b.padded_channels, -1, -1};
    Expr back = emit_.bb().Normalize(MakeCall(GetOp("relax.layout_transform"), {b.blocked}, attrs));
    out->push_back({b.plain, WithSInfo(back, b.plain->sinfo), nullptr});
    b.materialized = true;
  }

  // `x` (NCHW) as NCHW<block>c: its blocked value, or a transform (one per var and block). A
  // padded blocked value is used as it is only by elementwise ops (`elementwise`); others get
  // a transform of the cropped NCHW value (zero padding).
  Expr BlockedInput(const Expr& x, int64_t block, std::vector<Binding>* out,
                    bool elementwise = false) {
    const VarNode* v = As<VarNode>(x);
    Expr src = x;
    std::string src_layout = kPlain;
    if (v) {
      auto c = transformed_.find({v, block});
      if (c != transformed_.end()) return c->second;
      auto it = blocked_.find(v);
      if (it != blocked_.end() && it->second.padded_channels && !elementwise) {
        Materialize(v, out);
        it = blocked_.end();
      }
      if (it != blocked_.end()) {
        if (it->second.block == block) return it->second.blocked;
        src = it->second.blocked;  // from one blocking to the other, not through NCHW
        src_layout = SplitLayout(kPlain, 'C', it->second.block);
      }
    }
    VarRef t = Emit(MakeCall(GetOp("relax.layout_transform"), {src},
                             LayoutAttrs(src_layout, SplitLayout(kPlain, 'C', block))),
                    (v ? v->name : std::string("x")) + "_nchwc", out);
    if (v) transformed_[{v, block}] = t;
    return t;
  }

  bool AlterConv(const VarRef& var, const Expr& value, std::vector<Binding>* out) {
    const CallNode* c = OpCall(value, "relax.nn.conv2d");
    if (!c || c->args.size() != 2 || !IsF32Tensor(c->args[0]->sinfo, 4)) return false;
    const ConstantNode* w = As<ConstantNode>(c->args[1]);
    std::vector<int64_t> ws;
    if (!w || w->dtype != DataType::Float(32) || !StaticShape(c->args[1]->sinfo, &ws) ||
        ws.size() != 4)
      return false;
    int64_t channels = 0, groups = c->attrs.count("groups") ? GetIntAttr(c->attrs, "groups") : 1;
    int64_t co = BlockFor(ws[0]);
    // Many output channels that a full block does not divide (SqueezeNet's 1000-class 1 x 1
    // conv head): full blocks, the last one padded, rather than half-width vectors (2.3x).
    if (groups == 1 && co != 0 && co < block_ && ws[0] >= 32 * block_) co = 0;
    // A 1 x 1 image (an SE block's excitation) of fewer channels than the block: one block of
    // all of them, so the squeeze-excite chain needs no transform (cost: a short vector).
    const auto& od = *var->sinfo->values;
    int64_t oh = 0, ow = 0;
    if (co == 0 && ws[0] < block_ && od[2].AsInt(&oh) && oh == 1 && od[3].AsInt(&ow) && ow == 1)
      co = ws[0];
    // More output channels than a block, none dividing them: blocks of the target's size, the
    // last one padded (weights and per-channel constants zero-padded; cropped on the way back).
    const bool pad_out = co == 0 && ws[0] > block_ && groups == 1;
    if (pad_out) co = block_;
    if (!(*c->args[0]->sinfo->values)[1].AsInt(&channels) || co == 0) return false;
    int64_t ci = 0;
    std::string wlayout;
    if (groups == 1) {
      // The input's blocking when it is blocked already (any block dividing the channels
      // serves the reduction), else the block, else one block of all channels (an image).
      const VarNode* xv = As<VarNode>(c->args[0]);
      auto it = xv ? blocked_.find(xv) : blocked_.end();
      // More input channels than a block, none dividing them (an STFT's 129 magnitudes):
      // blocks of the target's size, the input and the weights zero-padded.
      ci = it != blocked_.end() && !it->second.padded_channels ? it->second.block
           : BlockFor(channels)                                ? BlockFor(channels)
           : channels < block_                                 ? channels
                                                               : block_;
      wlayout = "OIHW" + std::to_string(ci) + "i" + std::to_string(co) + "o";
    } else if (groups == channels && ws[0] == channels && ws[1] == 1) {
      ci = co;
      wlayout = "OIHW1i" + std::to_string(co) + "o";
    } else if (groups > 1 && channels % groups == 0 && ws[0] % groups == 0 &&
               (channels / groups) % co == 0 && (ws[0] / groups) % co == 0) {
      // A grouped conv whose groups are whole blocks (RegNet's 16-channel groups): each output
      // block reads the input blocks of its own group, as a dense blocked conv over them.
      ci = co;
      wlayout = "OIHW" + std::to_string(ci) + "i" + std::to_string(co) + "o";
    }
    if (ci == 0) return false;
    Expr xb = BlockedInput(c->args[0], ci, out);
    Expr wb = TransformConstant(*w, ws, "OIHW", wlayout);
    VarRef vb = Emit(MakeCall(GetOp("relax.nn.conv2d_nchwc"), {xb, wb}, c->attrs),
                     var->name + "_nchwc", out);
    blocked_[var.get()] = {var, vb, co, false, pad_out ? ws[0] : 0};
    return true;
  }

  // An elementwise or numpy-broadcast op over a blocked value and operands that are blocked
  // with the same block (equal dims, or 1 except the channel), per-channel or all-ones.
  bool AlterElementwise(const VarRef& var, const Expr& value, std::vector<Binding>* out) {
    const CallNode* c = As<CallNode>(value);
    const OpNode* op = c ? As<OpNode>(c->op) : nullptr;
    if (!op || op->name == "relax.nn.batch_norm" || c->args.empty()) return false;
    const OpInfo* info = LookupOp(op->name);
    if (!info ||
        (info->pattern != OpPatternKind::kElemWise && info->pattern != OpPatternKind::kBroadcast))
      return false;
    const StructInfo& os = var->sinfo;
    if (!os || os->kind != SIKind::kTensor || !os->values || os->ndim != 4) return false;
    const std::vector<PrimExpr>& odims = *os->values;
    int64_t block = 0;   // the largest block among the blocked operands
    int64_t padded = 0;  // the channels of a padded blocked operand
    for (const auto& a : c->args)
      if (const VarNode* v = As<VarNode>(a); v && blocked_.count(v)) {
        block = std::max(block, blocked_.at(v).block);
        padded = std::max(padded, blocked_.at(v).padded_channels);
      }
    if (block == 0) return false;
    int64_t channels = 0;
    if (!odims[1].AsInt(&channels) || (channels % block != 0 && padded != channels)) return false;
    if (channels % block == 0) padded = 0;
    std::vector<Expr> args;
    for (const auto& a : c->args) {
      const StructInfo& s = a->sinfo;
      if (!s || s->kind != SIKind::kTensor || !s->values) return false;
      const VarNode* v = As<VarNode>(a);
      auto it = v ? blocked_.find(v) : blocked_.end();
      if (it != blocked_.end()) {
        if (!Broadcasts(*s->values, odims, /*same_channel=*/true)) return false;
        args.push_back(BlockedInput(a, block, out, /*elementwise=*/true));
        continue;
      }
      // An NCHW operand of the output's channels (a residual): transformed in, so the value
      // stays blocked (one copy, where the transform back and the next conv's in are two).
      if (s->ndim == 4 && As<VarNode>(a) && Broadcasts(*s->values, odims, /*same_channel=*/true)) {
        args.push_back(BlockedInput(a, block, out));
        continue;
      }
      // Right-aligned to rank 4: every dim 1 except possibly the channel (equal to the output's).
      std::vector<int64_t> dims;
      if (s->ndim > 4 || !StaticShape(s, &dims)) return false;
      dims.insert(dims.begin(), 4 - dims.size(), 1);
      if (dims[0] != 1 || dims[2] != 1 || dims[3] != 1 || (dims[1] != 1 && dims[1] != channels))
        return false;
      if (dims[1] == 1) {
        args.push_back(a);  // broadcasts against the blocked shape as it is
        continue;
      }
      if (const ConstantNode* k = As<ConstantNode>(a)) {
        args.push_back(TransformConstant(*k, dims, kPlain, SplitLayout(kPlain, 'C', block)));
        continue;
      }
      if (s->ndim != 4) return false;
      args.push_back(BlockedInput(a, block, out));
    }
    VarRef vb = Emit(MakeCall(c->op, args, c->attrs, c->sinfo_args), var->name + "_nchwc", out);
    blocked_[var.get()] = {var, vb, block, false, padded};
    return true;
  }

  // Ops whose blocked form is the same op on NCHW<b>c data: 2-D max and average pooling, global
  // average pooling and reductions over H and W with kept dims (relax.reduce over axes 2, 3:
  // the SE blocks' squeeze), and concatenation along the channels (each input's channels a
  // multiple of the block). Applies when the (first) input is blocked already.
  bool AlterPoolOrConcat(const VarRef& var, const Expr& value, std::vector<Binding>* out) {
    const CallNode* c = As<CallNode>(value);
    const OpNode* op = c ? As<OpNode>(c->op) : nullptr;
    if (!op || c->args.empty() || !var->sinfo || var->sinfo->ndim != 4) return false;
    const VarNode* x = As<VarNode>(c->args[0]);
    auto it = x ? blocked_.find(x) : blocked_.end();
    const std::string& name = op->name;
    if (name == "relax.concat") {
      int64_t axis = GetIntAttr(c->attrs, "axis"), block = 0;
      if (axis != 1 && axis != -3) return false;
      for (const auto& a : c->args)
        if (const VarNode* v = As<VarNode>(a); v && blocked_.count(v))
          block = std::max(block, blocked_.at(v).block);
      if (block == 0) return false;
      std::vector<Expr> args;
      for (const auto& a : c->args) {
        int64_t ch = 0;
        const StructInfo& s = a->sinfo;
        if (!s || !s->values || s->ndim != 4 || !(*s->values)[1].AsInt(&ch) || ch % block != 0)
          return false;
      }
      for (const auto& a : c->args) args.push_back(BlockedInput(a, block, out));
      Attrs attrs = c->attrs;
      attrs["axis"] = int64_t{1};
      return EmitBlocked(var, MakeCall(c->op, args, attrs), block, out);
    }
    if (it == blocked_.end() || it->second.padded_channels || c->args.size() != 1) return false;
    const int64_t block = it->second.block;
    const Expr& xb = it->second.blocked;
    if (name == "relax.nn.max_pool2d" || name == "relax.nn.avg_pool2d")
      return EmitBlocked(var, MakeCall(c->op, {xb}, c->attrs), block, out);
    if (name == "relax.nn.global_avg_pool")
      return EmitBlocked(var,
                         MakeCall(GetOp("relax.reduce"), {xb},
                                  {{"kind", std::string("mean")},
                                   {"axes", std::vector<int64_t>{2, 3}},
                                   {"keepdims", int64_t{1}}}),
                         block, out);
    if (name == "relax.reduce" && GetIntAttr(c->attrs, "keepdims") != 0) {
      std::vector<int64_t> axes;
      for (int64_t a : GetIntsAttr(c->attrs, "axes")) {
        int64_t k = a < 0 ? a + 4 : a;
        if (k != 2 && k != 3) return false;
        axes.push_back(k);
      }
      Attrs attrs = c->attrs;
      attrs["axes"] = axes;
      return EmitBlocked(var, MakeCall(c->op, {xb}, attrs), block, out);
    }
    return false;
  }

  bool EmitBlocked(const VarRef& var, const Expr& call, int64_t block, std::vector<Binding>* out) {
    VarRef vb = Emit(call, var->name + "_nchwc", out);
    blocked_[var.get()] = {var, vb, block};
    return true;
  }

  // The block for `channels`: the target's, else half of it (24, 40 or 72 channels in blocks
  // of 8 rather than NCHW), else 0.
  int64_t BlockFor(int64_t channels) const {
    for (int64_t b : {block_, block_ / 2})
      if (b >= 4 && channels % b == 0) return b;
    return 0;
  }

  // True if `dims` broadcasts to `out` (each dim equal or a static 1; with `same_channel` the
  // channel dim equal).
  bool Broadcasts(const std::vector<PrimExpr>& dims, const std::vector<PrimExpr>& out,
                  bool same_channel) {
    if (dims.size() != out.size()) return false;
    for (size_t k = 0; k < dims.size(); ++k) {
      int64_t one = 0;
      bool eq = emit_.bb().analyzer().CanProveEqual(dims[k], out[k]);
      if (!eq && (k == 1 && same_channel)) return false;
      if (!eq && !(dims[k].AsInt(&one) && one == 1)) return false;
    }
    return true;
  }

  int64_t block_;
  BindingEmitter emit_;
  std::map<const VarNode*, Blocked> blocked_;
  std::map<std::pair<const VarNode*, int64_t>, VarRef> transformed_;
  bool dataflow_ = false;
};

// layout_transform(layout_transform(s, A -> B), B -> A) is s when the shapes agree (no padded
// block); then transforms whose dataflow var is unused go.
class TransformCanceller : public ExprMutator {
 public:
  void VisitBinding(const Binding& b, std::vector<Binding>* out) override {
    Expr value = VisitExpr(b.value);
    if (const CallNode* c = OpCall(value, "relax.layout_transform");
        c && !b.match_sinfo && b.var->kind == ExprKind::kDataflowVar) {
      transforms_[b.var.get()] = value;
      const VarNode* t = As<VarNode>(c->args[0]);
      auto inner = t ? transforms_.find(t) : transforms_.end();
      if (inner != transforms_.end()) {
        const CallNode* ic = As<CallNode>(inner->second);
        // (A crop then a zero padding is not the padded value it came from.)
        if (!ic->attrs.count("dst_extents") &&
            GetStrAttr(ic->attrs, "src_layout") == GetStrAttr(c->attrs, "dst_layout") &&
            GetStrAttr(ic->attrs, "dst_layout") == GetStrAttr(c->attrs, "src_layout") &&
            SameShape(ic->args[0]->sinfo, b.var->sinfo)) {
          var_remap_[b.var.get()] = ic->args[0];
          return;
        }
      }
    }
    out->push_back({b.var, value, b.match_sinfo});
  }

 private:
  bool SameShape(const StructInfo& a, const StructInfo& b) {
    if (!a || !b || !a->values || !b->values || a->values->size() != b->values->size())
      return false;
    for (size_t k = 0; k < a->values->size(); ++k)
      if (!an_.CanProveEqual((*a->values)[k], (*b->values)[k])) return false;
    return true;
  }

  std::map<const VarNode*, Expr> transforms_;
  arith::Analyzer an_;
};

// Drops bindings of layout_transform whose var nothing in the function uses (until none is
// left; outside dataflow blocks too: an If branch's transforms back to NCHW).
class UnusedTransforms : public ExprMutator {
 public:
  bool removed = false;
  Expr VisitExpr_(const FunctionNode* op, const Expr& e) override {
    uses_ = CountVarUses(e);
    return ExprMutator::VisitExpr_(op, e);
  }
  void VisitBinding(const Binding& b, std::vector<Binding>* out) override {
    if (!b.match_sinfo && OpCall(b.value, "relax.layout_transform") && uses_[b.var.get()] == 0) {
      removed = true;
      return;
    }
    ExprMutator::VisitBinding(b, out);
  }

 private:
  std::map<const VarNode*, int> uses_;
};

}  // namespace

int64_t AlterLayoutBlock(const PassContext& ctx, int64_t target_block) {
  auto it = ctx.options.find("alter-layout.block");
  if (it != ctx.options.end()) {
    const std::string& v = it->second;
    int64_t b = -1;
    if (!v.empty() && v.size() <= 4 && v.find_first_not_of("0123456789") == std::string::npos)
      b = std::stoll(v);
    if (b < 0 || b == 1 || b > 64)
      RELAX_THROW("--pass-option alter-layout.block=" << v << ": expected 0 (off) or 2..64");
    return b;
  }
  return target_block;
}

void AlterLayout(IRModule* mod, const PassContext& ctx, int64_t target_block) {
  const int64_t block = AlterLayoutBlock(ctx, target_block);
  if (block > 0) LayoutAlterer(block).MutateModule(mod, IsPrimitiveOrPartitioned);
  TransformCanceller().MutateModule(mod, IsPrimitiveOrPartitioned);
  for (bool again = true; again;) {
    UnusedTransforms u;
    u.MutateModule(mod, IsPrimitiveOrPartitioned);
    again = u.removed;
  }
}

}  // namespace relax
