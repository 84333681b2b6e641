// Element bounds of integer tensors known at import (import_context.h: RangeOf, NoteRange), so
// index checks of constant index tables sliced or reshaped at run time (BERT's position ids
// sliced to the sequence length) are decided at import instead of reading the indices back.
#include <algorithm>
#include <set>
#include <string>

#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

// Larger integer constants are not scanned (an index table is far smaller).
constexpr int64_t kMaxScan = int64_t{1} << 22;

std::optional<IntRange> ScanConstant(const ConstantNode& c) {
  if (!(c.dtype.is_int() || c.dtype.is_uint()) || c.numel() <= 0 || c.numel() > kMaxScan ||
      !c.data || c.dtype.bits > 64)
    return std::nullopt;
  if (static_cast<int64_t>(c.data->size()) < c.numel() * c.dtype.bytes()) return std::nullopt;
  IntRange r{INT64_MAX, INT64_MIN};
  for (int64_t i = 0; i < c.numel(); ++i) {
    const int64_t v = ConstantIntAt(c, i);
    if (c.dtype.is_uint() && c.dtype.bits == 64 && v < 0) return std::nullopt;  // above 2^63
    r.lo = std::min(r.lo, v);
    r.hi = std::max(r.hi, v);
  }
  return r;
}

// Ops whose result holds only elements of their first operand (moved, repeated or dropped).
bool MovesFirstOperand(const std::string& op) {
  static const std::set<std::string> kOps = {
      "relax.reshape",      "relax.permute_dims",    "relax.strided_slice", "relax.dyn_slice",
      "relax.take",         "relax.gather_elements", "relax.gather_nd",     "relax.tile",
      "relax.broadcast_to", "relax.split_part"};
  return kOps.count(op) > 0;
}

}  // namespace

std::optional<IntRange> ImportContext::RangeOf(const Expr& e) const {
  if (!e) return std::nullopt;
  if (auto it = ranges_.find(e.get()); it != ranges_.end()) return it->second.second;
  if (const ConstantNode* c = As<ConstantNode>(e)) return ScanConstant(*c);
  return std::nullopt;
}

void ImportContext::NoteRange(const Expr& out, const Expr& value) {
  const CallNode* c = As<CallNode>(value);
  const OpNode* op = c ? As<OpNode>(c->op) : nullptr;
  if (!op || c->args.empty()) return;
  std::optional<IntRange> r;
  if (MovesFirstOperand(op->name)) {
    r = RangeOf(c->args[0]);
  } else if (op->name == "relax.concat") {
    for (const Expr& a : c->args) {
      std::optional<IntRange> ra = RangeOf(a);
      if (!ra) return;
      r = r ? IntRange{std::min(r->lo, ra->lo), std::max(r->hi, ra->hi)} : *ra;
    }
  }
  if (r) ranges_[out.get()] = {out, *r};
}

}  // namespace relax::frontend::onnx_import
