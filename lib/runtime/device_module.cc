// DeviceModule (an artifact's loaded device kernels) and RelaxLaunchKernel, the runtime-table
// entry generated host code launches device kernels through.
#include "relax/runtime/device_module.h"

#include <cstdint>
#include <exception>
#include <string>
#include <utility>

#include "relax/runtime/c_api.h"
#include "relax/support/error.h"

namespace relax::runtime {

std::unique_ptr<DeviceModule> DeviceModule::Load(const LaunchTable& table, const uint8_t* binary,
                                                 uint64_t size, int device_id) {
  auto m = std::make_unique<DeviceModule>();
  m->dev = DLDevice{DeviceAPI::DeviceTypeOfFormat(table.format), device_id};
  m->table = table;
  m->api = DeviceAPI::Get(m->dev);
  m->handle = m->api->LoadKernels(m->dev, m->table, binary, size);
  return m;
}

DeviceModule::~DeviceModule() {
  if (api && handle) {
    try {
      api->UnloadKernels(dev, handle);
    } catch (...) {
      // Unloading only releases driver objects; nothing to report at destruction.
    }
  }
}

void DeviceModule::Launch(int32_t index, KernelLaunch launch) const {
  if (index < 0 || static_cast<size_t>(index) >= table.kernels.size())
    RELAX_THROW("launch of kernel index " << index << ": the launch table has "
                                          << table.kernels.size() << " kernels");
  const KernelSpec& k = table.kernels[static_cast<size_t>(index)];
  CheckKernelLaunch(k.name, k.num_buffers(), k.num_scalars(), launch);
  if (constant_size > 0) {
    launch.constant.assign(launch.buffers.size(), 0);
    const auto lo = reinterpret_cast<uintptr_t>(constant_begin);
    for (size_t i = 0; i < launch.buffers.size(); ++i) {
      const auto p = reinterpret_cast<uintptr_t>(launch.buffers[i]);
      launch.constant[i] = p >= lo && launch.buffer_bytes[i] <= constant_size &&
                           p - lo <= constant_size - launch.buffer_bytes[i];
    }
  }
  api->LaunchKernel(dev, handle, index, launch, nullptr);
}

void DeviceModule::Sync() const { api->SyncStream(dev, nullptr); }

}  // namespace relax::runtime

extern "C" int32_t RelaxLaunchKernel(void* device_module, int32_t kernel_index,
                                     const int64_t* packed, int32_t count) {
  using relax::runtime::DeviceModule;
  using relax::runtime::KernelLaunch;
  try {
    const auto* m = static_cast<const DeviceModule*>(device_module);
    if (!m)
      RELAX_THROW("launch of kernel index " << kernel_index
                                            << ": no device module (the artifact's device kernels "
                                               "were not loaded)");
    if (kernel_index < 0 || static_cast<size_t>(kernel_index) >= m->table.kernels.size())
      RELAX_THROW("launch of kernel index " << kernel_index << ": the launch table has "
                                            << m->table.kernels.size() << " kernels");
    const auto& k = m->table.kernels[static_cast<size_t>(kernel_index)];
    const int64_t nb = static_cast<int64_t>(k.num_buffers());
    const int64_t ns = static_cast<int64_t>(k.num_scalars());
    const int64_t expect = 3 + 1 + 2 * nb + 1 + ns;
    if (!packed || count != expect)
      RELAX_THROW("kernel '" << k.name << "': " << count << " packed launch values, expected "
                             << expect << " (" << nb << " buffers, " << ns << " scalars)");
    if (packed[3] != nb)
      RELAX_THROW("kernel '" << k.name << "': " << packed[3] << " buffers passed, it takes " << nb);
    if (packed[4 + 2 * nb] != ns)
      RELAX_THROW("kernel '" << k.name << "': " << packed[4 + 2 * nb]
                             << " scalars passed, it takes " << ns);
    KernelLaunch launch;
    for (int d = 0; d < 3; ++d) launch.grid[d] = packed[d];
    launch.buffers.resize(static_cast<size_t>(nb));
    launch.buffer_bytes.resize(static_cast<size_t>(nb));
    for (int64_t b = 0; b < nb; ++b) {
      int64_t bytes = packed[5 + 2 * b];
      if (bytes < 0)
        RELAX_THROW("kernel '" << k.name << "': buffer " << b << " has " << bytes << " bytes");
      launch.buffers[static_cast<size_t>(b)] =
          reinterpret_cast<void*>(static_cast<intptr_t>(packed[4 + 2 * b]));
      launch.buffer_bytes[static_cast<size_t>(b)] = static_cast<uint64_t>(bytes);
    }
    launch.scalars.assign(packed + 5 + 2 * nb, packed + 5 + 2 * nb + ns);
    m->Launch(kernel_index, std::move(launch));
    return 0;
  } catch (const std::exception& e) {
    RelaxSetLastError(e.what());
  } catch (...) {
    RelaxSetLastError("launch of a device kernel: unknown error");
  }
  return 1;
}
