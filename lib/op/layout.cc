// Layout ops: layout_transform (relax/op/layout.h names the layouts), the copy that moves a tensor
// between a plain layout and a blocked one (NCHW <-> NCHW16c) or between two blockings. Chosen by
// the alter-layout pass; constant weights are transformed at compile time (fold-constants or the
// pass itself). A blocked axis whose extent the factor does not divide is zero-padded; the
// reverse transform then yields the padded extent (outer * factor).
#include "relax/op/layout.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>

#include "op_common.h"
#include "relax/te/te.h"

namespace relax {

Layout Layout::Parse(const std::string& s) {
  Layout l;
  std::set<char> seen;
  auto bad = [&](const std::string& why) { RELAX_THROW("layout '" << s << "': " << why); };
  for (size_t i = 0; i < s.size();) {
    unsigned char ch = static_cast<unsigned char>(s[i]);
    if (std::isupper(ch)) {
      if (!seen.insert(s[i]).second) bad(std::string("axis ") + s[i] + " appears twice");
      l.axes.push_back({s[i], 0});
      ++i;
      continue;
    }
    if (!std::isdigit(ch)) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", ch);
      bad("expected an uppercase axis or a factor, got " +
          (ch >= 0x20 && ch < 0x7f ? "'" + s.substr(i, 1) + "'" : std::string("byte ") + hex));
    }
    int64_t f = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && f <= 4096)
      f = f * 10 + (s[i++] - '0');
    if (f < 1 || f > 4096) bad("sub-axis factor must be in [1, 4096]");
    if (i == s.size() || !std::islower(static_cast<unsigned char>(s[i])))
      bad("a factor must be followed by a lowercase sub-axis");
    char p = static_cast<char>(std::toupper(static_cast<unsigned char>(s[i])));
    if (!seen.insert(s[i]).second) bad(std::string("sub-axis ") + s[i] + " appears twice");
    l.axes.push_back({p, f});
    ++i;
  }
  for (const auto& a : l.axes)
    if (a.factor && l.Find(a.primal) < 0)
      bad(std::string("sub-axis ") + static_cast<char>(std::tolower(a.primal)) +
          " without its axis " + a.primal);
  return l;
}

std::string Layout::str() const {
  std::string s;
  for (const auto& a : axes)
    s += a.factor ? std::to_string(a.factor) + static_cast<char>(std::tolower(a.primal))
                  : std::string(1, a.primal);
  return s;
}

int Layout::Find(char p) const {
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i].primal == p && !axes[i].factor) return static_cast<int>(i);
  return -1;
}

int64_t Layout::Factor(char p) const {
  for (const auto& a : axes)
    if (a.primal == p && a.factor) return a.factor;
  return 0;
}

std::string Layout::Primals() const {
  std::string s;
  for (const auto& a : axes)
    if (!a.factor) s += a.primal;
  return s;
}

std::string SplitLayout(const std::string& primal, char axis, int64_t factor) {
  return primal + std::to_string(factor) + static_cast<char>(std::tolower(axis));
}

std::vector<uint8_t> TransformLayoutData(const std::vector<uint8_t>& data, size_t elem_bytes,
                                         const std::vector<int64_t>& shape, const Layout& src,
                                         const Layout& dst, std::vector<int64_t>* out_shape) {
  std::string a = src.Primals(), b = dst.Primals();
  if (src.ndim() != shape.size() ||
      std::set<char>(a.begin(), a.end()) != std::set<char>(b.begin(), b.end()))
    RELAX_THROW("layout transform of a constant: layouts '"
                << src.str() << "' -> '" << dst.str() << "' do not fit its rank " << shape.size());
  std::map<char, int64_t> extent;  // logical extent of each primal axis
  int64_t numel = 1;
  for (size_t k = 0; k < shape.size(); ++k) numel *= shape[k];
  if (data.size() != static_cast<size_t>(numel) * elem_bytes)
    RELAX_THROW("layout transform of a constant: " << data.size() << " bytes for " << numel
                                                   << " elements");
  for (size_t k = 0; k < src.ndim(); ++k)
    if (!src.axes[k].factor)
      extent[src.axes[k].primal] = shape[k] * std::max<int64_t>(1, src.Factor(src.axes[k].primal));
  out_shape->clear();
  int64_t out_numel = 1;
  for (const auto& ax : dst.axes) {
    int64_t f = dst.Factor(ax.primal);
    out_shape->push_back(ax.factor ? ax.factor
                         : f       ? (extent[ax.primal] + f - 1) / f
                                   : extent[ax.primal]);
    out_numel *= out_shape->back();
  }
  std::vector<int64_t> stride(shape.size(), 1);
  for (size_t k = shape.size(); k-- > 1;) stride[k - 1] = stride[k] * shape[k];
  std::vector<uint8_t> out(static_cast<size_t>(out_numel) * elem_bytes, 0);
  std::vector<int64_t> idx(dst.ndim(), 0);
  std::map<char, int64_t> coord;
  for (int64_t o = 0; o < out_numel; ++o) {
    for (size_t k = 0; k < dst.ndim(); ++k)
      if (!dst.axes[k].factor)
        coord[dst.axes[k].primal] = idx[k] * std::max<int64_t>(1, dst.Factor(dst.axes[k].primal));
    for (size_t k = 0; k < dst.ndim(); ++k)
      if (dst.axes[k].factor) coord[dst.axes[k].primal] += idx[k];
    bool inside = true;
    int64_t off = 0;
    for (size_t k = 0; k < src.ndim(); ++k) {
      const auto& ax = src.axes[k];
      int64_t l = coord[ax.primal], f = src.Factor(ax.primal);
      inside = inside && l < extent[ax.primal];
      off += (ax.factor ? l % ax.factor : f ? l / f : l) * stride[k];
    }
    if (inside)
      std::copy_n(data.begin() + off * elem_bytes, elem_bytes, out.begin() + o * elem_bytes);
    for (size_t k = dst.ndim(); k-- > 0;) {
      if (++idx[k] < (*out_shape)[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

namespace {

struct LayoutPair {
  Layout src, dst;
};

LayoutPair GetLayouts(const CallNode& c, size_t ndim) {
  LayoutPair p{Layout::Parse(GetStrAttr(c.attrs, "src_layout")),
               Layout::Parse(GetStrAttr(c.attrs, "dst_layout"))};
  std::string a = p.src.Primals(), b = p.dst.Primals();
  if (std::set<char>(a.begin(), a.end()) != std::set<char>(b.begin(), b.end()))
    RELAX_THROW("layout_transform: layouts '" << p.src.str() << "' and '" << p.dst.str()
                                              << "' have different axes");
  if (p.src.ndim() != ndim)
    RELAX_THROW("layout_transform: source layout '" << p.src.str() << "' has " << p.src.ndim()
                                                    << " axes, the tensor " << ndim);
  return p;
}

// The logical extent of primal axis `p` of a tensor of shape `s` in layout `l`.
PrimExpr LogicalExtent(const Layout& l, const std::vector<PrimExpr>& s, char p) {
  PrimExpr e = s[l.Find(p)];
  if (int64_t f = l.Factor(p)) e = e * PrimExpr(f);
  return e;
}

// Attribute `dst_extents` (optional): per destination axis, -1, or the extent of an unsplit
// primal axis that a source block padded (NCHW16c of 255 channels -> NCHW: 255, not 256); the
// padding is dropped. Empty when absent.
std::vector<int64_t> DstExtents(const CallNode& c, const LayoutPair& p,
                                const std::vector<PrimExpr>& s, arith::Analyzer& an) {
  auto it = c.attrs.find("dst_extents");
  if (it == c.attrs.end()) return {};
  const auto& e = GetIntsAttr(c.attrs, "dst_extents");
  if (e.size() != p.dst.ndim())
    RELAX_THROW("layout_transform: dst_extents has " << e.size() << " entries, layout '"
                                                     << p.dst.str() << "' " << p.dst.ndim()
                                                     << " axes");
  for (size_t k = 0; k < e.size(); ++k) {
    if (e[k] == -1) continue;
    const LayoutAxis& a = p.dst.axes[k];
    if (e[k] < 0 || a.factor || p.dst.Factor(a.primal))
      RELAX_THROW("layout_transform: dst_extents[" << k << "] = " << e[k]
                                                   << " must be -1, or >= 0 on an unsplit axis");
    const PrimExpr extent = an.Simplify(LogicalExtent(p.src, s, a.primal));
    if (!an.CanProve(PrimExpr(e[k]) <= extent))
      RELAX_THROW("layout_transform: dst_extents["
                  << k << "] = " << e[k] << " is not provably within the source's "
                  << "extent " << ToString(extent) << " of axis " << a.primal);
  }
  return e;
}

std::vector<PrimExpr> TransformedShape(const LayoutPair& p, const std::vector<PrimExpr>& s,
                                       arith::Analyzer& an,
                                       const std::vector<int64_t>& dst_extents = {}) {
  std::vector<PrimExpr> out;
  for (size_t k = 0; k < p.dst.axes.size(); ++k) {
    const auto& a = p.dst.axes[k];
    if (a.factor) {
      out.push_back(PrimExpr(a.factor));
      continue;
    }
    if (!dst_extents.empty() && dst_extents[k] >= 0) {
      out.push_back(PrimExpr(dst_extents[k]));
      continue;
    }
    PrimExpr e = LogicalExtent(p.src, s, a.primal);
    if (int64_t f = p.dst.Factor(a.primal)) e = FloorDiv(e + PrimExpr(f - 1), PrimExpr(f));
    out.push_back(an.Simplify(e));
  }
  return out;
}

StructInfo InferLayoutTransform(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 1);
  const auto& x = TensorArg(c, 0);
  LayoutPair p = GetLayouts(c, x.values->size());
  // Each sub-axis of the source holds exactly its factor (checked at run time when symbolic).
  for (size_t k = 0; k < p.src.ndim(); ++k)
    if (int64_t f = p.src.axes[k].factor)
      bb.UnifyDim((*x.values)[k], PrimExpr(f),
                  "layout_transform source '" + p.src.str() + "' axis " + std::to_string(k));
  return TensorSInfo(
      TransformedShape(p, *x.values, bb.analyzer(), DstExtents(c, p, *x.values, bb.analyzer())),
      x.dtype);
}

te::Tensor ComputeLayoutTransform(const CallNode& c, const std::vector<te::Tensor>& in) {
  const te::Tensor X = in[0];
  LayoutPair p = GetLayouts(c, X->shape().size());
  arith::Analyzer an;
  std::vector<PrimExpr> shape =
      TransformedShape(p, X->shape(), an, DstExtents(c, p, X->shape(), an));
  DataType t = X->dtype();
  return te::Compute(
      shape,
      [&](const std::vector<Var>& i) {
        // Each primal axis's logical coordinate, then the source index of each source axis.
        std::map<char, PrimExpr> coord;
        for (size_t k = 0; k < p.dst.axes.size(); ++k) {
          const auto& a = p.dst.axes[k];
          if (a.factor) continue;
          coord[a.primal] = i[k];
          if (int64_t f = p.dst.Factor(a.primal)) {
            size_t sub = 0;
            while (p.dst.axes[sub].primal != a.primal || !p.dst.axes[sub].factor) ++sub;
            coord[a.primal] = i[k] * PrimExpr(f) + i[sub];
          }
        }
        std::vector<PrimExpr> idx;
        for (const auto& a : p.src.axes) {
          int64_t f = p.src.Factor(a.primal);
          const PrimExpr& l = coord.at(a.primal);
          idx.push_back(a.factor ? FloorMod(l, PrimExpr(a.factor))
                        : f      ? FloorDiv(l, PrimExpr(f))
                                 : l);
        }
        // Blocks past a non-multiple extent read zeros.
        PrimExpr inside;
        for (const auto& a : p.dst.axes) {
          int64_t f = p.dst.Factor(a.primal);
          if (a.factor || !f) continue;
          PrimExpr e = LogicalExtent(p.src, X->shape(), a.primal);
          if (an.CanProve(Eq(FloorMod(e, PrimExpr(f)), PrimExpr(0)))) continue;
          PrimExpr ok = coord.at(a.primal) < e;
          inside = inside.defined() ? (inside && ok) : ok;
          // The clamped index keeps the (discarded) load in bounds.
          int s = p.src.Find(a.primal);
          if (!p.src.Factor(a.primal)) idx[s] = ClampIndex(idx[s], e);
        }
        PrimExpr v = (*X)(idx);
        if (!inside.defined()) return v;
        return Select(inside, v, t.is_float() ? FloatImm(0.0, t) : IntImm(0, t));
      },
      "layout_transform");
}

}  // namespace

void RegisterLayoutOps() {
  RegisterOp("relax.layout_transform", OpPatternKind::kInjective, InferLayoutTransform,
             ComputeLayoutTransform);
}

}  // namespace relax
