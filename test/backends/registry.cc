// The test backends (test/backends/<name>/), registered into relaxc-test-backends (relaxc with
// them added; test/backends/tests.cmake): one line each, like backends/registry.cc.
namespace relax::test_backends {
namespace fakegpu {
void RegisterFakeGpuBackend();
}
}  // namespace relax::test_backends

namespace {
const bool kRegistered = [] {
  relax::test_backends::fakegpu::RegisterFakeGpuBackend();
  return true;
}();
}  // namespace
