// ONNX converter for TfIdfVectorizer: a packed call of vm.builtin.tfidf (lib/vm/builtins_text.cc)
// with the pool, n-gram counts, indexes and weights as constants; the output shape is static.
// Semantics: ONNX operator spec, section TfIdfVectorizer (opset 9); string pools are not
// supported (a compile error).
#include <algorithm>
#include <cstring>

#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

Expr Int(int64_t v) { return MakePrimValue(PrimExpr(v)); }

Expr I64Vector(const std::vector<int64_t>& v) {
  std::vector<uint8_t> b(v.size() * 8);
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return MakeConstant(DataType::Int(64), {static_cast<int64_t>(v.size())}, std::move(b));
}

std::vector<Value> ConvertTfIdf(ImportContext& ctx, const onnx::NodeProto& n) {
  Expr x = ctx.Tensor(n, 0);
  if (!x->sinfo->values || x->sinfo->values->empty() || x->sinfo->values->size() > 2)
    RELAX_THROW(ctx.Where(n) << "input must have rank 1 or 2, got " << ToString(x->sinfo));
  if (x->sinfo->dtype != DataType::Int(64) && x->sinfo->dtype != DataType::Int(32))
    RELAX_THROW(ctx.Where(n) << "only int32/int64 inputs are supported, got "
                             << ToString(x->sinfo));
  if (FindAttr(n, "pool_strings"))
    RELAX_THROW(ctx.Where(n) << "attribute 'pool_strings' (string pools) is not supported");
  std::string mode_s = AttrString(n, "mode", "");
  int64_t mode = mode_s == "TF" ? 0 : mode_s == "IDF" ? 1 : mode_s == "TFIDF" ? 2 : -1;
  if (mode < 0)
    RELAX_THROW(ctx.Where(n) << "attribute 'mode' must be TF, IDF or TFIDF, got '" << mode_s
                             << "'");
  int64_t min_n = AttrInt(n, "min_gram_length", -1), max_n = AttrInt(n, "max_gram_length", -1),
          skip = AttrInt(n, "max_skip_count", -1);
  if (min_n < 1 || max_n < min_n || skip < 0)
    RELAX_THROW(ctx.Where(n) << "needs 1 <= min_gram_length <= max_gram_length and "
                                "max_skip_count >= 0, got "
                             << min_n << ", " << max_n << ", " << skip);
  std::vector<int64_t> pool = AttrInts(n, "pool_int64s", {}),
                       counts = AttrInts(n, "ngram_counts", {}),
                       indexes = AttrInts(n, "ngram_indexes", {});
  if (indexes.empty()) RELAX_THROW(ctx.Where(n) << "attribute 'ngram_indexes' is missing");
  // Output positions: the output has max + 1 columns (an index of INT64_MAX overflowed that and
  // would ask for an impossible tensor: the importer fuzzer found it).
  constexpr int64_t kMaxColumns = int64_t{1} << 31;
  for (int64_t i : indexes)
    if (i < 0 || i >= kMaxColumns)
      RELAX_THROW(ctx.Where(n) << "attribute 'ngram_indexes' holds " << i
                               << "; output positions must be in [0, 2^31)");
  int64_t out_size = *std::max_element(indexes.begin(), indexes.end()) + 1;
  std::vector<float> w;
  if (const auto* a = FindAttr(n, "weights")) w.assign(a->floats().begin(), a->floats().end());
  std::vector<uint8_t> wb(w.size() * 4);
  if (!w.empty()) std::memcpy(wb.data(), w.data(), wb.size());
  Expr weights = MakeConstant(DataType::Float(32), {static_cast<int64_t>(w.size())}, std::move(wb));
  std::vector<PrimExpr> od = {PrimExpr(out_size)};
  if (x->sinfo->values->size() == 2) od.insert(od.begin(), (*x->sinfo->values)[0]);
  return {EmitDataDependent(
      ctx, n, 0, "vm.builtin.tfidf",
      {x, I64Vector(pool), I64Vector(counts), I64Vector(indexes), weights, Int(min_n), Int(max_n),
       Int(skip), Int(mode), Int(out_size), MakeStringImm(ctx.Where(n))},
      od, DataType::Float(32))};
}

}  // namespace

void AddTextConverters(ConverterTable* t) { (*t)["TfIdfVectorizer"] = ConvertTfIdf; }

}  // namespace relax::frontend::onnx_import
