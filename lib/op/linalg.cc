// Linear-algebra ops: relax.einsum and relax.linalg.det.
// Semantics: ONNX operator spec sections Einsum (opset 12) and Det (opset 11).
//
// einsum {equation}: the equation is explicit ("ab,bc->ac"): the importer expands ellipses into
// letters and makes an implicit output explicit, so here every term has one letter per axis of
// its operand. A letter repeated within a term takes the diagonal; letters absent from the
// output are summed over. An axis of static extent 1 broadcasts against the letter's other
// axes. The op is one TE compute: a sum reduction over the summed letters of the product of the
// operands (no reduction when every letter is in the output).
//
// det: the determinant of the trailing (M, M) matrices; M must be static (at most kMaxDetRank).
// Up to kMaxLeibnizRank by the Leibniz formula (a sum over the M! permutations), above by LU
// factorization with partial pivoting, one materialized stage per elimination step (pivot
// magnitude, pivot row, eliminated matrix); the determinant is the signed product of the
// diagonal. A zero pivot column gives 0. relax.linalg.det_lu (the importer's choice when M is
// symbolic or above kMaxDetRank) runs the same elimination as one sequential hand-built PrimFunc.
#include <algorithm>
#include <map>
#include <numeric>

#include "op_common.h"
#include "relax/te/te.h"

namespace relax {

namespace {

constexpr int64_t kMaxDetRank = 32;
constexpr int64_t kMaxLeibnizRank = 4;

struct Equation {
  std::vector<std::string> inputs;
  std::string output;
};

Equation ParseEquation(const CallNode& c, size_t nargs) {
  const std::string& eq = GetStrAttr(c.attrs, "equation");
  size_t arrow = eq.find("->");
  if (arrow == std::string::npos)
    RELAX_THROW("op 'relax.einsum': equation '" << eq << "' needs an explicit output");
  Equation e;
  std::string lhs = eq.substr(0, arrow);
  e.output = eq.substr(arrow + 2);
  size_t start = 0;
  while (true) {
    size_t comma = lhs.find(',', start);
    e.inputs.push_back(lhs.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (e.inputs.size() != nargs)
    RELAX_THROW("op 'relax.einsum': equation '" << eq << "' has " << e.inputs.size()
                                                << " terms for " << nargs << " operands");
  auto letters = [&](const std::string& t) {
    for (char ch : t)
      if (!std::isalpha(static_cast<unsigned char>(ch)))
        RELAX_THROW("op 'relax.einsum': bad character '" << ch << "' in equation '" << eq << "'");
  };
  for (const auto& t : e.inputs) letters(t);
  letters(e.output);
  for (size_t i = 0; i < e.output.size(); ++i) {
    char ch = e.output[i];
    if (e.output.find(ch, i + 1) != std::string::npos)
      RELAX_THROW("op 'relax.einsum': output letter '" << ch << "' repeated in '" << eq << "'");
    bool found = false;
    for (const auto& t : e.inputs) found |= t.find(ch) != std::string::npos;
    if (!found)
      RELAX_THROW("op 'relax.einsum': output letter '" << ch << "' is in no input of '" << eq
                                                       << "'");
  }
  return e;
}

bool IsOne(const PrimExpr& d) {
  int64_t v = -1;
  return d.AsInt(&v) && v == 1;
}

// The extent of every letter: its dims unified, dims of static extent 1 broadcasting.
std::map<char, PrimExpr> LetterDims(const Equation& e,
                                    const std::vector<std::vector<PrimExpr>>& shapes,
                                    BlockBuilder* bb, const std::string& what) {
  std::map<char, PrimExpr> dims;
  for (size_t k = 0; k < e.inputs.size(); ++k) {
    const std::string& t = e.inputs[k];
    if (t.size() != shapes[k].size())
      RELAX_THROW("op 'relax.einsum': term '" << t << "' has " << t.size()
                                              << " letters for an operand of rank "
                                              << shapes[k].size());
    for (size_t a = 0; a < t.size(); ++a) {
      const PrimExpr& d = shapes[k][a];
      auto it = dims.find(t[a]);
      if (it == dims.end() || IsOne(it->second)) {
        dims[t[a]] = d;
      } else if (!IsOne(d) && bb) {
        it->second = bb->UnifyDim(it->second, d, what + " letter '" + std::string(1, t[a]) + "'");
      }
    }
  }
  return dims;
}

StructInfo InferEinsum(const CallNode& c, BlockBuilder& bb) {
  if (c.args.empty()) RELAX_THROW("op 'relax.einsum' needs at least one operand");
  Equation e = ParseEquation(c, c.args.size());
  std::vector<std::vector<PrimExpr>> shapes;
  DataType t = TensorArg(c, 0).dtype;
  for (size_t k = 0; k < c.args.size(); ++k) {
    const auto& a = TensorArg(c, k);
    if (a.dtype != t) RELAX_THROW("op 'relax.einsum': operands differ in dtype");
    shapes.push_back(*a.values);
  }
  auto dims = LetterDims(e, shapes, &bb, DescribeCall(c));
  std::vector<PrimExpr> out;
  for (char ch : e.output) out.push_back(dims[ch]);
  return TensorSInfo(out, t);
}

te::Tensor ComputeEinsum(const CallNode& c, const std::vector<te::Tensor>& in) {
  Equation e = ParseEquation(c, in.size());
  std::vector<std::vector<PrimExpr>> shapes;
  for (const auto& x : in) shapes.push_back(x->shape());
  auto dims = LetterDims(e, shapes, nullptr, "");
  std::vector<PrimExpr> out;
  for (char ch : e.output) out.push_back(dims[ch]);
  std::vector<te::ReduceAxis> raxes;
  std::map<char, PrimExpr> var;
  for (const auto& [ch, d] : dims)
    if (e.output.find(ch) == std::string::npos) {
      raxes.push_back(te::RAxis(d, std::string("r_") + ch));
      var[ch] = raxes.back().var;
    }
  return te::Compute(
      out,
      [&](const std::vector<Var>& i) {
        for (size_t a = 0; a < e.output.size(); ++a) var[e.output[a]] = i[a];
        PrimExpr prod;
        for (size_t k = 0; k < in.size(); ++k) {
          std::vector<PrimExpr> idx;
          for (size_t a = 0; a < e.inputs[k].size(); ++a)
            idx.push_back(IsOne(shapes[k][a]) ? PrimExpr(0) : var[e.inputs[k][a]]);
          PrimExpr v = (*in[k])(idx);
          prod = prod.defined() ? prod * v : v;
        }
        return raxes.empty() ? prod : te::Sum(prod, raxes);
      },
      "einsum");
}

// ---- det ------------------------------------------------------------------------------------
StructInfo InferDet(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 1);
  const auto& x = TensorArg(c, 0);
  if (!x.dtype.is_float()) RELAX_THROW("op 'relax.linalg.det': needs a float tensor");
  if (x.ndim < 2) RELAX_THROW("op 'relax.linalg.det': needs rank >= 2, got " << x.ndim);
  const auto& v = *x.values;
  PrimExpr m = bb.UnifyDim(v[x.ndim - 2], v[x.ndim - 1], DescribeCall(c) + " square matrices");
  int64_t mm = 0;
  if (!m.AsInt(&mm) || mm > kMaxDetRank)
    RELAX_THROW("op 'relax.linalg.det': the matrix size must be static and at most "
                << kMaxDetRank << ", got " << ToString(m));
  return TensorSInfo(std::vector<PrimExpr>(v.begin(), v.end() - 2), x.dtype);
}

// Leibniz formula: the signed sum over the permutations of products of one entry per row.
te::Tensor DetLeibniz(const te::Tensor& X, int64_t m) {
  const auto& xs = X->shape();
  size_t b = xs.size() - 2;
  DataType t = X->dtype();
  return te::Compute(
      std::vector<PrimExpr>(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(b)),
      [&](const std::vector<Var>& i) {
        if (m == 0) return FloatImm(1.0, t);
        std::vector<int> perm(m);
        std::iota(perm.begin(), perm.end(), 0);
        PrimExpr acc;
        do {
          int inversions = 0;
          for (int p = 0; p < m; ++p)
            for (int q = p + 1; q < m; ++q) inversions += perm[p] > perm[q];
          PrimExpr term;
          for (int r = 0; r < m; ++r) {
            std::vector<PrimExpr> idx(i.begin(), i.end());
            idx.push_back(PrimExpr(r));
            idx.push_back(PrimExpr(perm[r]));
            PrimExpr v = (*X)(idx);
            term = term.defined() ? term * v : v;
          }
          if (!acc.defined())
            acc = inversions % 2 ? FloatImm(0.0, t) - term : term;
          else
            acc = inversions % 2 ? acc - term : acc + term;
        } while (std::next_permutation(perm.begin(), perm.end()));
        return acc;
      },
      "det");
}

// LU factorization with partial pivoting (see the file comment).
te::Tensor DetLU(const te::Tensor& X, int64_t m) {
  const auto& xs = X->shape();
  size_t nb = xs.size() - 2;
  DataType t = X->dtype();
  std::vector<PrimExpr> bshape(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(nb));
  auto at = [&](const te::Tensor& a, const std::vector<Var>& bi, const PrimExpr& r,
                const PrimExpr& c) {
    std::vector<PrimExpr> idx(bi.begin(), bi.begin() + static_cast<std::ptrdiff_t>(nb));
    idx.push_back(r);
    idx.push_back(c);
    return (*a)(idx);
  };
  auto abs = [&](const PrimExpr& v) {
    return Select(v < FloatImm(0.0, t), FloatImm(0.0, t) - v, v);
  };
  te::Tensor a = X;
  std::vector<te::Tensor> pivots;
  for (int64_t k = 0; k + 1 < m; ++k) {
    te::ReduceAxis r1 = te::RAxis(PrimExpr(m - k), "r");
    te::Tensor mag = te::Compute(
        bshape,
        [&](const std::vector<Var>& i) {
          return te::MaxReduce(abs(at(a, i, r1.var + PrimExpr(k), PrimExpr(k))), {r1});
        },
        "det_pivot_mag");
    te::ReduceAxis r2 = te::RAxis(PrimExpr(m - k), "r");
    te::Tensor piv = te::Compute(
        bshape,
        [&](const std::vector<Var>& i) {
          PrimExpr row = r2.var + PrimExpr(k);
          std::vector<PrimExpr> bi(i.begin(), i.end());
          PrimExpr hit = Eq(abs(at(a, i, row, PrimExpr(k))), (*mag)(bi));
          return te::Reduce("min", Select(hit, row, PrimExpr(m)), {r2});
        },
        "det_pivot_row");
    pivots.push_back(piv);
    std::vector<PrimExpr> shape = xs;
    te::Tensor prev = a;
    a = te::Compute(
        shape,
        [&](const std::vector<Var>& i) {
          std::vector<PrimExpr> bi(i.begin(), i.begin() + static_cast<std::ptrdiff_t>(nb));
          PrimExpr p = Min((*piv)(bi), PrimExpr(m - 1));
          // Row r of the matrix with rows k and p swapped.
          auto row = [&](const PrimExpr& r) {
            return Select(Eq(r, PrimExpr(k)), p, Select(Eq(r, p), PrimExpr(k), r));
          };
          PrimExpr ri = i[nb], cj = i[nb + 1];
          PrimExpr v = at(prev, i, row(ri), cj);
          PrimExpr pivot = at(prev, i, p, PrimExpr(k));
          PrimExpr zero = FloatImm(0.0, t);
          PrimExpr f = Select(Eq(pivot, zero), zero, at(prev, i, row(ri), PrimExpr(k)) / pivot);
          return Select(ri > PrimExpr(k), v - f * at(prev, i, p, cj), v);
        },
        "det_lu", /*materialize=*/true);
  }
  return te::Compute(
      bshape,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx(i.begin(), i.end());
        PrimExpr prod;
        for (int64_t k = 0; k < m; ++k) {
          std::vector<PrimExpr> d = idx;
          d.push_back(PrimExpr(k));
          d.push_back(PrimExpr(k));
          prod = prod.defined() ? prod * (*a)(d) : (*a)(d);
        }
        // Each row swap (pivot row != k) flips the sign.
        PrimExpr swaps = PrimExpr(0);
        for (int64_t k = 0; k + 1 < m; ++k)
          swaps = swaps + Select(Eq((*pivots[k])(idx), PrimExpr(k)), PrimExpr(0), PrimExpr(1));
        return Select(Eq(FloorMod(swaps, PrimExpr(2)), PrimExpr(1)), FloatImm(0.0, t) - prod, prod);
      },
      "det");
}

te::Tensor ComputeDet(const CallNode&, const std::vector<te::Tensor>& in) {
  const auto& xs = in[0]->shape();
  int64_t m = 0;
  xs[xs.size() - 2].AsInt(&m);
  if (m == 0) xs[xs.size() - 1].AsInt(&m);
  return m <= kMaxLeibnizRank ? DetLeibniz(in[0], m) : DetLU(in[0], m);
}

// ---- det_lu: symbolic (or large) M -----------------------------------------------------------
// A hand-built PrimFunc (sequential, like the scatter kernels): per matrix, a working copy is
// eliminated in place with partial pivoting; the determinant accumulates the pivots and the sign
// of the row swaps. M may be any run-time size.
StructInfo InferDetLU(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 1);
  const auto& x = TensorArg(c, 0);
  if (!x.dtype.is_float()) RELAX_THROW("op 'relax.linalg.det_lu': needs a float tensor");
  if (x.ndim < 2) RELAX_THROW("op 'relax.linalg.det_lu': needs rank >= 2, got " << x.ndim);
  const auto& v = *x.values;
  bb.UnifyDim(v[x.ndim - 2], v[x.ndim - 1], DescribeCall(c) + " square matrices");
  return TensorSInfo(std::vector<PrimExpr>(v.begin(), v.end() - 2), x.dtype);
}

Expr LegalizeDetLU(const CallNode& c, BlockBuilder& bb) {
  std::vector<te::Tensor> in = te::Placeholders(c);
  Buffer x = in[0]->buffer;
  DataType t = x->dtype;
  const auto& xs = x->shape;
  size_t nb = xs.size() - 2;
  PrimExpr m = xs[nb];
  std::vector<PrimExpr> bshape(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(nb));
  Buffer out = MakeBuffer("out", t, bshape);
  Buffer a = MakeBuffer("lu", t, xs);
  Buffer acc = MakeBuffer("det_acc", t, {PrimExpr(1)});
  Buffer mx = MakeBuffer("pivot_mag", t, {PrimExpr(1)});
  Buffer piv = MakeBuffer("pivot_row", DataType::Int(64), {PrimExpr(1)});
  PrimExpr zero = FloatImm(0.0, t), one = FloatImm(1.0, t);
  auto abs = [&](const PrimExpr& v) { return Select(v < zero, zero - v, v); };
  std::vector<Var> bv;
  for (size_t d = 0; d < nb; ++d) bv.push_back(MakeVar("b" + std::to_string(d)));
  auto at = [&](const Buffer& b, const PrimExpr& r, const PrimExpr& col) {
    std::vector<PrimExpr> idx(bv.begin(), bv.end());
    idx.push_back(r);
    idx.push_back(col);
    return idx;
  };
  Var i = MakeVar("i"), j = MakeVar("j"), k = MakeVar("k"), tmp = MakeVar("tmp", t);
  Var f = MakeVar("f", t), p = MakeVar("p");
  auto loop = [&](const Var& v, const PrimExpr& lo, const PrimExpr& hi, tir::Stmt body) {
    return tir::For(v, lo, hi - lo, tir::ForKind::kSerial, std::move(body));
  };
  tir::Stmt copy = loop(i, 0, m, loop(j, 0, m, tir::Store(a, at(a, i, j), Load(x, at(x, i, j)))));
  // Pivot: the first row at or below k with the largest magnitude in column k.
  tir::Stmt search = tir::Seq(
      {tir::Store(piv, {PrimExpr(0)}, k), tir::Store(mx, {PrimExpr(0)}, abs(Load(a, at(a, k, k)))),
       loop(i, k + PrimExpr(1), m,
            tir::IfThenElse(abs(Load(a, at(a, i, k))) > Load(mx, {PrimExpr(0)}),
                            tir::Seq({tir::Store(mx, {PrimExpr(0)}, abs(Load(a, at(a, i, k)))),
                                      tir::Store(piv, {PrimExpr(0)}, i)})))});
  tir::Stmt swap = tir::IfThenElse(
      Ne(p, k), tir::Seq({loop(j, 0, m,
                               tir::Let(tmp, Load(a, at(a, k, j)),
                                        tir::Seq({tir::Store(a, at(a, k, j), Load(a, at(a, p, j))),
                                                  tir::Store(a, at(a, p, j), tmp)}))),
                          tir::Store(acc, {PrimExpr(0)}, zero - Load(acc, {PrimExpr(0)}))}));
  PrimExpr pv = Load(a, at(a, k, k));
  tir::Stmt eliminate = tir::IfThenElse(
      Ne(pv, zero),
      loop(i, k + PrimExpr(1), m,
           tir::Let(
               f, Load(a, at(a, i, k)) / pv,
               loop(j, k, m,
                    tir::Store(a, at(a, i, j), Load(a, at(a, i, j)) - f * Load(a, at(a, k, j)))))));
  tir::Stmt step = tir::Seq(
      {search,
       tir::Let(p, Load(piv, {PrimExpr(0)}),
                tir::Seq({swap, tir::Store(acc, {PrimExpr(0)}, Load(acc, {PrimExpr(0)}) * pv),
                          eliminate}))});
  tir::Stmt body = tir::Seq(
      {copy, tir::Store(acc, {PrimExpr(0)}, one), loop(k, 0, m, step),
       tir::Store(out, std::vector<PrimExpr>(bv.begin(), bv.end()), Load(acc, {PrimExpr(0)}))});
  for (size_t d = nb; d-- > 0;)
    body = tir::For(bv[d], IntImm(0), bshape[d], tir::ForKind::kSerial, body);
  body = tir::Allocate(a, tir::Allocate(acc, tir::Allocate(mx, tir::Allocate(piv, body))));
  return CallHandWrittenPrimFunc(bb, c, "det_lu", {x, out}, body, {c.args[0]});
}

}  // namespace

void RegisterLinalgOps() {
  RegisterOp("relax.einsum", OpPatternKind::kOutEWiseFusable, InferEinsum, ComputeEinsum);
  RegisterOp("relax.linalg.det", OpPatternKind::kInjective, InferDet, ComputeDet);
  OpInfo lu;
  lu.name = "relax.linalg.det_lu";
  lu.pattern = OpPatternKind::kOpaque;
  lu.infer = InferDetLU;
  lu.legalize = LegalizeDetLU;
  RegisterOp(std::move(lu));
}

}  // namespace relax
