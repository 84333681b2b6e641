// ArtifactRunner: load + run an artifact against its entry signature (shared by the run tools
// and the embedding C API).
#include "relax/vm/runner.h"

#include "relax/runtime/thread_pool.h"
#include "relax/support/error.h"

namespace relax::runtime {
namespace {

std::shared_ptr<LoadedArtifact> LoadChecked(const std::string& path, int device_id) {
  NumThreadsFromEnv();  // a bad RELAX_NUM_THREADS is an error before any work
  return LoadedArtifact::Load(path, device_id);
}

}  // namespace

ArtifactRunner::ArtifactRunner(const std::string& path, int device_id)
    : artifact_(LoadChecked(path, device_id)), vm_(artifact_) {}

std::string ArtifactRunner::OutputName(size_t i) const {
  const auto& sig = outputs();
  return i < sig.size() && !sig[i].name.empty() ? sig[i].name : "output" + std::to_string(i);
}

std::string ArtifactRunner::InputNamesText(const std::vector<TensorSig>& inputs) {
  std::string names;
  for (size_t i = 0; i < inputs.size(); ++i)
    names +=
        (i ? ", " : "") + inputs[i].name + (inputs[i].default_constant >= 0 ? " (optional)" : "");
  return names.empty() ? "none" : names;
}

std::vector<NDArray> ArtifactRunner::Run(std::vector<NDArray> in) {
  std::vector<NDArray> outs;
  for (Value& v : RunValues(std::vector<Value>(in.begin(), in.end()))) {
    NDArray* t = std::get_if<NDArray>(&v);
    if (!t)
      RELAX_THROW("output '" << OutputName(outs.size())
                             << "' is a sequence; this interface returns tensors only");
    outs.push_back(std::move(*t));
  }
  return outs;
}

namespace {
// int4 / uint4 given as their bit patterns (int8 / uint8, one value per byte): each byte must
// hold a value of the type ([-8, 7] / [0, 15]), as onnxruntime's int4 tensors can only hold.
void CheckNibbles(const NDArray& t, DLDataType want, const std::string& name) {
  const bool is_signed = want.code == kDLInt;
  const int lo = is_signed ? -8 : 0, hi = is_signed ? 7 : 15;
  const auto* p = static_cast<const uint8_t*>(t.data());
  for (int64_t k = 0; k < t.numel(); ++k) {
    const int v = is_signed ? static_cast<int8_t>(p[k]) : p[k];
    if (v < lo || v > hi)
      RELAX_THROW("input '" << name << "': element " << k << " is " << v << ", outside "
                            << DTypeToString(want) << "'s range [" << lo << ", " << hi
                            << "] (one value per byte)");
  }
}
}  // namespace

std::vector<Value> ArtifactRunner::RunValues(std::vector<Value> in) {
  const auto& sig = inputs();
  for (size_t i = 0; i < in.size() && i < sig.size(); ++i) {
    NDArray* t = std::get_if<NDArray>(&in[i]);
    if (!t || !t->defined() || sig[i].sequence) continue;  // VirtualMachine reports it
    DLDataType want = ParseDType(sig[i].dtype);
    DLDataType bits = BitPatternDType(want);
    if (DTypeEqual(want, bits) || !DTypeEqual(t->dtype(), bits)) continue;
    if (want.bits == 4 && t->device().device_type == kDLCPU) CheckNibbles(*t, want, sig[i].name);
    *t = t->ReinterpretView(want);
  }
  return vm_.RunValues(in);
}

}  // namespace relax::runtime
