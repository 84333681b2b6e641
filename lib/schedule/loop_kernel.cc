// The loop-kernel schedule: see include/relax/schedule/loop_kernel.h.
#include "relax/schedule/loop_kernel.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "relax/ir/tir_functor.h"
#include "relax/schedule/stage.h"

namespace relax::schedule {

namespace {

bool UsesAny(const std::vector<PrimExpr>& es, const Var& v) {
  for (const auto& e : es)
    if (UsesVar(e, v)) return true;
  return false;
}

// The perfect nest of independent serial loops at the top of a statement.
struct Nest {
  std::vector<const tir::ForNode*> loops;
  tir::Stmt body;
};

Nest IndependentNest(const tir::Stmt& s) {
  Nest n;
  tir::Stmt cur = s;
  while (const auto* f = tir::As<tir::ForNode>(cur)) {
    if (f->iter_kind != tir::IterKind::kSpatial || f->for_kind != tir::ForKind::kSerial) break;
    bool ok = true;  // an extent may not depend on an enclosing loop of the nest
    for (const auto* outer : n.loops) ok = ok && !UsesVar(f->extent, outer->loop_var);
    if (!ok) break;
    n.loops.push_back(f);
    cur = f->body;
  }
  n.body = cur;
  return n;
}

// One parallel loop over the product of `loops`' extents (times `inner`, when given), each
// loop var bound by a let from the fused index; the last let binds `inner_var` (if defined).
tir::Stmt FusedParallel(const std::vector<const tir::ForNode*>& loops, const PrimExpr& inner,
                        const Var& inner_var, const tir::Stmt& body) {
  std::vector<std::pair<Var, PrimExpr>> dims;
  for (const auto* l : loops) dims.push_back({l->loop_var, l->extent});
  if (inner_var.defined()) dims.push_back({inner_var, inner});
  PrimExpr total = PrimExpr(1);
  for (const auto& [v, e] : dims) total = total * e;
  Var q = MakeVar("fused");
  std::vector<std::pair<Var, PrimExpr>> lets;
  PrimExpr stride = PrimExpr(1);
  for (size_t i = dims.size(); i-- > 0;) {
    PrimExpr idx = i == 0 ? FloorDiv(q, stride) : FloorMod(FloorDiv(q, stride), dims[i].second);
    if (dims.size() == 1) idx = q;
    lets.push_back({dims[i].first, idx});
    stride = stride * dims[i].second;
  }
  tir::Stmt s = body;
  for (const auto& [v, e] : lets) s = tir::Let(v, e, s);
  return tir::For(q, PrimExpr(0), total, tir::ForKind::kParallel, s);
}

// Replaces loads of the buffers in `swap` (W[..., r, k] -> W_t[..., k, r]).
class TransposedLoads : public tir::ExprMutator {
 public:
  explicit TransposedLoads(const std::map<const BufferNode*, Buffer>* swap) : swap_(swap) {}
  PrimExpr Mutate(const PrimExpr& e) { return VisitExpr(e); }

 protected:
  PrimExpr VisitExpr_(const tir::BufferLoadNode* op, const PrimExpr& e) override {
    auto it = swap_->find(op->buffer.get());
    if (it == swap_->end()) return tir::ExprMutator::VisitExpr_(op, e);
    std::vector<PrimExpr> idx;
    for (const auto& i : op->indices) idx.push_back(VisitExpr(i));
    std::swap(idx[idx.size() - 1], idx[idx.size() - 2]);
    return Load(it->second, idx);
  }

 private:
  const std::map<const BufferNode*, Buffer>* swap_;
};

class LoopKernelScheduler {
 public:
  LoopKernelScheduler(const tir::PrimFuncNode& f, int64_t row_chunk) : row_chunk_(row_chunk) {
    const size_t inputs = f.buffers.size() - static_cast<size_t>(f.num_outputs);
    for (size_t i = 0; i < inputs; ++i) inputs_.insert(f.buffers[i].get());
  }

  tir::Stmt Run(const tir::Stmt& body) {
    tir::Stmt s = Visit(body);
    // The transposes first, outermost, each in its own allocation (fold-constant-prologue
    // folds the outermost one of a constant weight).
    for (auto it = transposed_.rbegin(); it != transposed_.rend(); ++it)
      s = tir::Allocate(it->second, tir::Seq({Transpose(it->first, it->second), s}));
    return s;
  }

 private:
  tir::Stmt Visit(const tir::Stmt& s) {
    if (const auto* a = tir::As<tir::AllocateNode>(s))
      return tir::Allocate(a->buffer, Visit(a->body));
    if (const auto* q = tir::As<tir::SeqStmtNode>(s)) {
      std::vector<tir::Stmt> out;
      for (const auto& x : q->seq) out.push_back(Visit(x));
      return tir::Seq(out);
    }
    if (const auto* l = tir::As<tir::LetStmtNode>(s))
      return tir::Let(l->var, l->value, Visit(l->body));
    if (const auto* f = tir::As<tir::ForNode>(s)) {
      if (f->iter_kind == tir::IterKind::kReduction || f->for_kind != tir::ForKind::kSerial)
        return tir::For(f->loop_var, f->min, f->extent, f->for_kind, Visit(f->body), f->thread_tag,
                        f->iter_kind);
      Nest n = IndependentNest(s);
      if (tir::Stmt mv = MatVec(n)) return mv;
      return Elementwise(n);
    }
    return s;
  }

  // An independent nest: one parallel loop over its loops, except that an innermost loop
  // whose body has no loop of its own stays a loop, vectorized, when there are outer loops.
  static tir::Stmt Elementwise(const Nest& n) {
    if (n.loops.size() >= 2 && !HasLoop(n.body)) {
      const tir::ForNode* in = n.loops.back();
      tir::Stmt inner = tir::For(in->loop_var, in->min, in->extent, tir::ForKind::kVectorized,
                                 n.body, "", tir::IterKind::kSpatial);
      std::vector<const tir::ForNode*> outer(n.loops.begin(), n.loops.end() - 1);
      return FusedParallel(outer, PrimExpr(), Var(), inner);
    }
    return FusedParallel(n.loops, PrimExpr(), Var(), n.body);
  }

  static bool HasLoop(const tir::Stmt& s) {
    struct Finder : tir::StmtVisitor {
      bool found = false;
      void VisitStmt_(const tir::ForNode*, const tir::Stmt&) override { found = true; }
    } f;
    f.VisitStmt(s);
    return f.found;
  }

  // W_t[..., k, r] = W[..., r, k], the outermost loop parallel.
  tir::Stmt Transpose(const Buffer& w, const Buffer& wt) const {
    std::vector<Var> vars;
    for (size_t i = 0; i < wt->shape.size(); ++i) vars.push_back(MakeVar("t" + std::to_string(i)));
    std::vector<PrimExpr> dst(vars.begin(), vars.end()), src = dst;
    std::swap(src[src.size() - 1], src[src.size() - 2]);
    tir::Stmt s = tir::Store(wt, dst, Load(w, src));
    for (size_t i = vars.size(); i-- > 0;)
      s = tir::For(vars[i], PrimExpr(0), wt->shape[i],
                   i == 0 ? tir::ForKind::kParallel : tir::ForKind::kSerial, s);
    return s;
  }

  Buffer TransposedOf(const Buffer& w) {
    auto it = transposed_.find(w);
    if (it != transposed_.end()) return it->second;
    std::vector<PrimExpr> shape = w->shape;
    std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
    Buffer wt = MakeBuffer(w->name + "_t", w->dtype, shape);
    transposed_[w] = wt;
    return wt;
  }

  // The matrix-vector stage (see the header), or null when `n` is not one.
  tir::Stmt MatVec(const Nest& n) {
    if (n.loops.empty()) return nullptr;
    const Var& row = n.loops.back()->loop_var;
    const auto* seq = tir::As<tir::SeqStmtNode>(n.body);
    if (!seq || seq->seq.size() != 2) return nullptr;
    const auto* init = tir::As<tir::BufferStoreNode>(seq->seq[0]);
    const auto* red = tir::As<tir::ForNode>(seq->seq[1]);
    if (!init || !red || red->iter_kind != tir::IterKind::kReduction) return nullptr;
    const auto* upd = tir::As<tir::BufferStoreNode>(red->body);
    if (!upd || upd->buffer != init->buffer || inputs_.count(init->buffer.get())) return nullptr;
    const Var& k = red->loop_var;
    const std::vector<PrimExpr>& idx = init->indices;
    if (idx.empty() || idx.size() != upd->indices.size()) return nullptr;
    for (size_t i = 0; i < idx.size(); ++i)
      if (!ExprDeepEqual(idx[i], upd->indices[i])) return nullptr;
    for (size_t i = 0; i + 1 < idx.size(); ++i)
      if (UsesVar(idx[i], row)) return nullptr;
    if (UsesAny(idx, k) || UsesVar(init->value, k) || UsesVar(red->extent, row)) return nullptr;
    // upd: acc[idx] = acc[idx] + a * W[..., g(row), k] (either factor order).
    const auto* add = upd->value.as<tir::BinaryOpNode>();
    if (!add || add->kind != PrimKind::kAdd) return nullptr;
    const auto* acc = add->a.as<tir::BufferLoadNode>();
    const auto* mul = add->b.as<tir::BinaryOpNode>();
    if (!acc || acc->buffer != init->buffer || !mul || mul->kind != PrimKind::kMul) return nullptr;
    const tir::BufferLoadNode* w = nullptr;
    PrimExpr a;
    for (int side = 0; side < 2 && !w; ++side) {
      const PrimExpr& x = side == 0 ? mul->b : mul->a;
      const PrimExpr& other = side == 0 ? mul->a : mul->b;
      const auto* l = x.as<tir::BufferLoadNode>();
      if (!l || !inputs_.count(l->buffer.get()) || l->indices.size() < 2) continue;
      const auto& wi = l->indices;
      if (!wi.back().same_as(k) || !UsesVar(wi[wi.size() - 2], row) ||
          UsesVar(wi[wi.size() - 2], k))
        continue;
      bool clean = true;
      for (size_t i = 0; i + 2 < wi.size(); ++i)
        clean = clean && !UsesVar(wi[i], row) && !UsesVar(wi[i], k);
      if (!clean || UsesVar(other, row)) continue;
      w = l;
      a = other;
    }
    if (!w) return nullptr;
    // The rows in chunks: row = row0 + r, r < rows. With a static row count that the chunk
    // divides (or that is below it) every chunk is full, and the chunk accumulates in a local
    // buffer (registers) and is stored once.
    const PrimExpr extent = n.loops.back()->extent;
    int64_t static_rows = 0, chunk_rows = row_chunk_;
    bool full = false;
    if (extent.AsInt(&static_rows) && static_rows > 0) {
      if (static_rows <= row_chunk_) chunk_rows = static_rows;
      // Else the largest multiple of 8 rows, down to a quarter chunk, that divides the rows.
      for (int64_t c = row_chunk_; c >= row_chunk_ / 4 && static_rows % chunk_rows; c -= 8)
        if (static_rows % c == 0) chunk_rows = c;
      full = static_rows % chunk_rows == 0;
    }
    const PrimExpr chunk(chunk_rows);
    Var c = MakeVar(VarName(row) + "_chunk");
    Var row0 = MakeVar(VarName(row) + "0"), rows = MakeVar(VarName(row) + "s");
    const PrimExpr rows_e = full ? chunk : PrimExpr(rows);
    std::map<const BufferNode*, Buffer> swap = {{w->buffer.get(), TransposedOf(w->buffer)}};
    TransposedLoads tl(&swap);
    // acc[idx(row0 + r)] (or the local chunk's element r).
    Buffer local =
        full ? MakeBuffer(init->buffer->name + "_local", init->buffer->dtype, {chunk}, "local")
             : Buffer();
    auto acc_at = [&](const Var& r) {
      if (local) return std::vector<PrimExpr>{r};
      std::vector<PrimExpr> at;
      for (const auto& i : idx) at.push_back(Substitute(i, {{row, row0 + r}}));
      return at;
    };
    const Buffer& acc_buf = local ? local : init->buffer;
    Var r1 = MakeVar("r"), r2 = MakeVar("r"), r3 = MakeVar("r");
    tir::Stmt init_s =
        tir::For(r1, PrimExpr(0), rows_e, tir::ForKind::kVectorized,
                 tir::Store(acc_buf, acc_at(r1), Substitute(init->value, {{row, row0 + r1}})));
    Var v = MakeVar("v", a.dtype());
    PrimExpr wload = tl.Mutate(Substitute(Load(w->buffer, w->indices), {{row, row0 + r2}}));
    tir::Stmt axpy =
        tir::For(r2, PrimExpr(0), rows_e, tir::ForKind::kVectorized,
                 tir::Store(acc_buf, acc_at(r2), Load(acc_buf, acc_at(r2)) + PrimExpr(v) * wload));
    tir::Stmt red_s = tir::For(k, red->min, red->extent, tir::ForKind::kSerial,
                               tir::Let(v, a, axpy), "", tir::IterKind::kReduction);
    tir::Stmt chunk_s;
    if (local) {
      std::vector<PrimExpr> out_at;
      for (const auto& i : idx) out_at.push_back(Substitute(i, {{row, row0 + r3}}));
      tir::Stmt store = tir::For(r3, PrimExpr(0), chunk, tir::ForKind::kVectorized,
                                 tir::Store(init->buffer, out_at, Load(local, {r3})));
      chunk_s = tir::Allocate(local, tir::Seq({init_s, red_s, store}));
    } else {
      chunk_s = tir::Let(rows, Min(chunk, extent - PrimExpr(row0)), tir::Seq({init_s, red_s}));
    }
    tir::Stmt chunk_body = tir::Let(row0, PrimExpr(c) * chunk, chunk_s);
    std::vector<const tir::ForNode*> outer(n.loops.begin(), n.loops.end() - 1);
    return FusedParallel(outer, FloorDiv(extent + (chunk - PrimExpr(1)), chunk), c, chunk_body);
  }

  int64_t row_chunk_;
  std::set<const BufferNode*> inputs_;
  std::map<Buffer, Buffer> transposed_;
};

}  // namespace

tir::PrimFunc ScheduleLoopKernel(const tir::PrimFunc& f, int64_t row_chunk) {
  auto n = std::make_shared<tir::PrimFuncNode>(*f);
  n->body = LoopKernelScheduler(*f, row_chunk).Run(f->body);
  return n;
}

}  // namespace relax::schedule
