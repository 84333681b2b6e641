// Timing helpers of `relaxc tune`.
#include "model_input.h"

#include <algorithm>
#include <cstring>

namespace relax::tools {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

runtime::NDArray RandomInput(const std::vector<int64_t>& shape, const std::string& dtype,
                             std::mt19937* rng) {
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  runtime::NDArray a = runtime::NDArray::Empty(shape, runtime::ParseDType(dtype));
  std::memset(a.data(), 0, a.nbytes());
  if (dtype == "float32") {
    float* p = static_cast<float*>(a.data());
    for (int64_t i = 0; i < a.numel(); ++i) p[i] = uni(*rng);
  }
  return a;
}

}  // namespace relax::tools
