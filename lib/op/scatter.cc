// Scatter ops: scatter_elements and scatter_nd, with the reductions none, add, mul, max, min.
// Semantics: ONNX operator spec sections ScatterElements (and the deprecated Scatter) and
// ScatterND. A scatter is sequential (later updates see earlier ones), so it is legalized to a
// PrimFunc of plain loops rather than a TE compute: a copy of the data into the output
// (independent iterations; the loop-kernel schedule makes it parallel), then one loop nest
// over the updates (iteration kind reduction: in order) that reads, combines and writes the
// output element each update names (duplicate indices: the last one wins for reduction none).
// Negative indices count from the end; out-of-range ones are clamped into the axis, never written
// out of bounds.
#include "op_common.h"
#include "relax/te/te.h"

namespace relax {

namespace {

const char* kReductions[] = {"none", "add", "mul", "max", "min"};

void CheckReduction(const CallNode& c) {
  const std::string& r = GetStrAttr(c.attrs, "reduction");
  for (const char* k : kReductions)
    if (r == k) return;
  RELAX_THROW("op '" << OpName(c) << "': unknown reduction '" << r << "'");
}

PrimExpr Combine(const std::string& r, const PrimExpr& cur, const PrimExpr& upd) {
  if (r == "add") return cur + upd;
  if (r == "mul") return cur * upd;
  if (r == "max") return Max(cur, upd);
  if (r == "min") return Min(cur, upd);
  return upd;
}

PrimExpr NormClamp(const PrimExpr& raw, const PrimExpr& extent) {
  PrimExpr i = raw.dtype() == DataType::Int(64) ? raw : Cast(DataType::Int(64), raw);
  i = Select(i < PrimExpr(0), i + extent, i);
  return Max(PrimExpr(0), Min(i, extent - PrimExpr(1)));
}

// Serial loops over `shape`; `body` gets the loop vars. `independent`: the iterations write
// distinct elements (else they run in order: iteration kind reduction, as duplicate indices
// combine in index order).
tir::Stmt Loops(const std::vector<PrimExpr>& shape,
                const std::function<tir::Stmt(const std::vector<PrimExpr>&)>& body,
                bool independent) {
  std::vector<Var> vars;
  for (size_t i = 0; i < shape.size(); ++i) vars.push_back(MakeVar("i" + std::to_string(i)));
  tir::Stmt s = body(std::vector<PrimExpr>(vars.begin(), vars.end()));
  for (size_t i = shape.size(); i-- > 0;)
    s = tir::For(vars[i], IntImm(0), shape[i], tir::ForKind::kSerial, s, "",
                 independent ? tir::IterKind::kSpatial : tir::IterKind::kReduction);
  return s;
}

StructInfo InferScatterElements(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 3);
  const auto& d = TensorArg(c, 0);
  const auto& i = TensorArg(c, 1);
  const auto& u = TensorArg(c, 2);
  CheckReduction(c);
  if (!(i.dtype.is_int() || i.dtype.is_uint()))
    RELAX_THROW("op 'relax.scatter_elements': indices must be integers");
  if (i.ndim != d.ndim || u.ndim != d.ndim || u.dtype != d.dtype)
    RELAX_THROW(bb.context() << DescribeCall(c)
                             << ": data, indices and updates must have one rank, and updates "
                                "the data's dtype");
  NormalizeAxis(GetIntAttr(c.attrs, "axis"), static_cast<int>(d.ndim), "relax.scatter_elements");
  for (int64_t k = 0; k < d.ndim; ++k)
    bb.UnifyDim((*i.values)[k], (*u.values)[k],
                DescribeCall(c) + " indices vs updates dim " + std::to_string(k));
  return TensorSInfo(*d.values, d.dtype);
}

StructInfo InferScatterND(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 3);
  const auto& d = TensorArg(c, 0);
  const auto& i = TensorArg(c, 1);
  const auto& u = TensorArg(c, 2);
  CheckReduction(c);
  int64_t k;
  if (!(i.dtype.is_int() || i.dtype.is_uint()) || i.ndim < 1 || !i.values->back().AsInt(&k))
    RELAX_THROW("op 'relax.scatter_nd': indices must be integers with a static last dim");
  if (k < 1 || k > d.ndim || u.dtype != d.dtype || u.ndim != i.ndim - 1 + d.ndim - k)
    RELAX_THROW(bb.context() << DescribeCall(c) << ": updates must have shape indices.shape[:-1]"
                             << " + data.shape[" << k << ":] and the data's dtype");
  for (int64_t a = 0; a < u.ndim; ++a) {
    PrimExpr want = a < i.ndim - 1 ? (*i.values)[a] : (*d.values)[k + a - (i.ndim - 1)];
    bb.UnifyDim((*u.values)[a], want, DescribeCall(c) + " updates dim " + std::to_string(a));
  }
  return TensorSInfo(*d.values, d.dtype);
}

Expr LegalizeScatter(const CallNode& c, BlockBuilder& bb) {
  bool nd = OpName(c) == "relax.scatter_nd";
  std::vector<te::Tensor> in = te::Placeholders(c);
  Buffer data = in[0]->buffer, idx = in[1]->buffer, upd = in[2]->buffer;
  Buffer out = MakeBuffer("out", data->dtype, data->shape);
  std::string red = GetStrAttr(c.attrs, "reduction");
  const auto& ds = data->shape;
  tir::Stmt copy = Loops(
      ds, [&](const std::vector<PrimExpr>& i) { return tir::Store(out, i, Load(data, i)); }, true);
  tir::Stmt scatter;
  if (!nd) {
    int axis = NormalizeAxis(GetIntAttr(c.attrs, "axis"), static_cast<int>(ds.size()),
                             "relax.scatter_elements");
    scatter = Loops(
        idx->shape,
        [&](const std::vector<PrimExpr>& p) {
          std::vector<PrimExpr> j = p;
          j[axis] = NormClamp(Load(idx, p), ds[axis]);
          for (size_t a = 0; a < ds.size(); ++a)
            if (static_cast<int>(a) != axis)
              j[a] = Max(PrimExpr(0), Min(p[a], ds[a] - PrimExpr(1)));
          return tir::Store(out, j, Combine(red, Load(out, j), Load(upd, p)));
        },
        false);
  } else {
    const auto& is = idx->shape;
    int64_t k = 0;
    is.back().AsInt(&k);
    size_t q = is.size() - 1;
    scatter = Loops(
        upd->shape,
        [&](const std::vector<PrimExpr>& p) {
          std::vector<PrimExpr> j;
          for (int64_t a = 0; a < k; ++a) {
            std::vector<PrimExpr> ip(p.begin(), p.begin() + q);
            ip.push_back(PrimExpr(a));
            j.push_back(NormClamp(Load(idx, ip), ds[a]));
          }
          for (size_t a = q; a < p.size(); ++a)
            j.push_back(Max(PrimExpr(0), Min(p[a], ds[k + a - q] - PrimExpr(1))));
          return tir::Store(out, j, Combine(red, Load(out, j), Load(upd, p)));
        },
        false);
  }
  return CallHandWrittenPrimFunc(bb, c, te::KernelNameHint(OpName(c)), {data, idx, upd, out},
                                 tir::Seq({copy, scatter}), {c.args[0], c.args[1], c.args[2]},
                                 "scatter");
}

}  // namespace

void RegisterScatterOps() {
  for (const char* name : {"relax.scatter_elements", "relax.scatter_nd"}) {
    OpInfo info;
    info.name = name;
    info.pattern = OpPatternKind::kOpaque;
    info.infer = std::string(name) == "relax.scatter_nd" ? InferScatterND : InferScatterElements;
    info.legalize = LegalizeScatter;
    RegisterOp(std::move(info));
  }
}

}  // namespace relax
