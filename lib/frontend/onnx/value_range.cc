// Element bounds of integer tensors known at import (import_context.h: RangeOf, NoteRange), so
// index checks of constant index tables sliced or reshaped at run time (BERT's position ids
// sliced to the sequence length) are decided at import instead of reading the indices back.
#include <algorithm>
#include <cstring>
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
  const uint8_t* p = c.data->data();
  int64_t bytes = c.dtype.bytes();
  if (static_cast<int64_t>(c.data->size()) < c.numel() * bytes) return std::nullopt;
  IntRange r{INT64_MAX, INT64_MIN};
  for (int64_t i = 0; i < c.numel(); ++i, p += bytes) {
    int64_t v = 0;
    switch (c.dtype.bits) {
      case 64: {
        uint64_t u;
        std::memcpy(&u, p, 8);
        if (c.dtype.is_uint() && u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
        v = static_cast<int64_t>(u);
        break;
      }
      case 32: {
        uint32_t u;
        std::memcpy(&u, p, 4);
        v = c.dtype.is_uint() ? int64_t{u} : int64_t{static_cast<int32_t>(u)};
        break;
      }
      case 16: {
        uint16_t u;
        std::memcpy(&u, p, 2);
        v = c.dtype.is_uint() ? int64_t{u} : int64_t{static_cast<int16_t>(u)};
        break;
      }
      default:
        v = c.dtype.is_uint() ? int64_t{p[0]} : int64_t{static_cast<int8_t>(p[0])};
    }
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
