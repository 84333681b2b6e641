// What `relaxc compile` and `relaxc tune` share: the driver's option parsing and model loading
// (relax/driver/model_input.h), and tune's timing helpers.
#ifndef RELAX_TOOLS_RELAXC_MODEL_INPUT_H_
#define RELAX_TOOLS_RELAXC_MODEL_INPUT_H_

#include <random>
#include <string>
#include <vector>

#include "relax/driver/model_input.h"
#include "relax/runtime/ndarray.h"

namespace relax::tools {

using driver::IsTextIR;
using driver::JoinCommas;
using driver::LoadModel;
using driver::ParseBound;
using driver::ParseDimValue;
using driver::ParseInt;

/// The median of `v` (0 when empty).
double Median(std::vector<double> v);

/// A timing input of `shape` and `dtype` (ParseDType name): float32 uniform in [-1, 1) from
/// `rng`, any other dtype zero (valid indices and masks).
runtime::NDArray RandomInput(const std::vector<int64_t>& shape, const std::string& dtype,
                             std::mt19937* rng);

}  // namespace relax::tools

#endif  // RELAX_TOOLS_RELAXC_MODEL_INPUT_H_
