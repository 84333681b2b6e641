// Text featurization builtins: n-gram counting with TF / IDF / TF-IDF weighting.
// Semantics: ONNX operator spec, section TfIdfVectorizer (opset 9), integer pools only.
#include <map>

#include "builtin_args.h"

namespace relax::runtime::builtin_args {
namespace {

std::vector<int64_t> Ints(const NDArray& t, const std::string& what) {
  std::vector<int64_t> v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = IntElem(t, i, what);
  return v;
}

// vm.builtin.tfidf(x (C) or (B, C) int32/int64, pool_int64s, ngram_counts, ngram_indexes,
// weights (float32; empty: all 1), int min_gram_length, int max_gram_length,
// int max_skip_count, int mode (0 TF, 1 IDF, 2 TFIDF), int output_size, string what) ->
// float32 (output_size) or (B, output_size). For every skip distance d in 1..max_skip_count+1
// and start position s, the n-grams x[s], x[s+d], ..., x[s+(n-1)d] with min <= n <= max that
// are in the pool increment the output at their ngram_indexes entry; 1-grams are counted for
// d = 1 only.
Value TfIdf(const Args& a) {
  const char* fn = "vm.builtin.tfidf";
  CheckArgc(fn, a, 11);
  const NDArray& x = AsCpuTensor(fn, a, 0);
  const std::string& what = AsStr(fn, a, 10);
  std::vector<int64_t> pool = Ints(AsCpuTensor(fn, a, 1), what + "pool_int64s");
  std::vector<int64_t> counts = Ints(AsCpuTensor(fn, a, 2), what + "ngram_counts");
  std::vector<int64_t> indexes = Ints(AsCpuTensor(fn, a, 3), what + "ngram_indexes");
  const NDArray& wt = AsCpuTensor(fn, a, 4);
  int64_t min_n = AsInt(fn, a, 5), max_n = AsInt(fn, a, 6), skip = AsInt(fn, a, 7),
          mode = AsInt(fn, a, 8), out_size = AsInt(fn, a, 9);
  std::vector<double> w(wt.numel());
  for (int64_t i = 0; i < wt.numel(); ++i) w[i] = FloatElem(wt, i, what + "weights");
  // The pool's n-grams, keyed by their items, to their output index.
  std::map<std::vector<int64_t>, int64_t> grams;
  int64_t id = 0;
  for (size_t g = 0; g < counts.size(); ++g) {
    int64_t n = static_cast<int64_t>(g) + 1;
    int64_t begin = counts[g],
            end = g + 1 < counts.size() ? counts[g + 1] : static_cast<int64_t>(pool.size());
    if (begin < 0 || end > static_cast<int64_t>(pool.size()) || begin > end ||
        (end - begin) % n != 0)
      RELAX_THROW(what << "ngram_counts does not split pool_int64s into n-grams");
    for (int64_t p = begin; p < end; p += n, ++id) {
      if (id >= static_cast<int64_t>(indexes.size()) || indexes[id] < 0 || indexes[id] >= out_size)
        RELAX_THROW(what << "ngram_indexes has no valid entry for n-gram " << id);
      grams[std::vector<int64_t>(pool.begin() + p, pool.begin() + p + n)] = indexes[id];
    }
  }
  if (!w.empty() && static_cast<int64_t>(w.size()) < out_size)
    RELAX_THROW(what << "weights has " << w.size() << " entries, fewer than the output size "
                     << out_size);
  if (x.ndim() > 2) RELAX_THROW(what << "input must have rank 1 or 2");
  int64_t rows = x.ndim() == 2 ? x.shape()[0] : 1, len = x.ndim() == 0 ? 1 : x.shape().back();
  std::vector<int64_t> xv = Ints(x, what + "input");
  std::vector<int64_t> freq(rows * out_size, 0);
  std::vector<int64_t> key;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t d = 1; d <= skip + 1; ++d)
      for (int64_t s = 0; s < len; ++s) {
        key.clear();
        for (int64_t n = 1, at = s; n <= max_n && at < len; ++n, at += d) {
          key.push_back(xv[r * len + at]);
          if (n < min_n || (n == 1 && d > 1)) continue;
          auto it = grams.find(key);
          if (it != grams.end()) ++freq[r * out_size + it->second];
        }
      }
  std::vector<int64_t> shape = {out_size};
  if (x.ndim() == 2) shape.insert(shape.begin(), rows);
  NDArray out = NDArray::Empty(shape, DLDataType{kDLFloat, 32, 1});
  float* q = static_cast<float*>(out.data());
  for (int64_t i = 0; i < rows * out_size; ++i) {
    double wi = w.empty() ? 1.0 : w[i % out_size];
    double f = static_cast<double>(freq[i]);
    q[i] = static_cast<float>(mode == 0 ? f : mode == 1 ? (f > 0 ? wi : 0) : f * wi);
  }
  return out;
}

}  // namespace

void AddTextBuiltins(BuiltinTable* t) { (*t)["vm.builtin.tfidf"] = TfIdf; }

}  // namespace relax::runtime::builtin_args
