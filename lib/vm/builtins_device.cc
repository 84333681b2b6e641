// Device placement builtins: the explicit copies the compiler's place-devices pass inserts
// (relax.to_device / relax.to_host, docs/design.md "Placement and device memory").
#include "builtin_args.h"
#include "relax/runtime/allocator.h"

namespace relax::runtime::builtin_args {
namespace {

// vm.builtin.to_device(tensor, int device_type, int device_id) -> the tensor on that device (its
// id relative to the device the artifact runs on: DeviceMemoryScope::Resolve); the tensor itself
// when it is there already (a caller's device-resident input).
Value ToDevice(const Args& a) {
  const char* fn = "vm.builtin.to_device";
  CheckArgc(fn, a, 3);
  const NDArray& t = AsTensor(fn, a, 0);
  const int64_t type = AsInt(fn, a, 1), id = AsInt(fn, a, 2);
  if (type <= kDLCPU || type > 1000 || id < 0 || id > 1 << 16)
    RELAX_THROW(fn << ": bad device " << type << ":" << id);
  const DLDevice dev =
      DeviceMemoryScope::Resolve(DLDevice{static_cast<DLDeviceType>(type), static_cast<int>(id)});
  return CopyTensorTo(t, dev);
}

// vm.builtin.to_host(tensor) -> the tensor in host memory (itself when it is there).
Value ToHost(const Args& a) {
  const char* fn = "vm.builtin.to_host";
  CheckArgc(fn, a, 1);
  return CopyTensorTo(AsTensor(fn, a, 0), DLDevice{kDLCPU, 0});
}

}  // namespace

void AddDeviceBuiltins(BuiltinTable* t) {
  (*t)["vm.builtin.to_device"] = ToDevice;
  (*t)["vm.builtin.to_host"] = ToHost;
}

}  // namespace relax::runtime::builtin_args
