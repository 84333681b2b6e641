// RelaxCheckKernelArgs: the argument check every generated kernel entry stub runs first, so an
// edited executable or a wrong call is a clean error instead of an out-of-bounds access.
#include <string>
#include <vector>

#include "relax/runtime/c_api.h"
#include "relax/runtime/device_api.h"
#include "relax/runtime/ndarray.h"
#include "relax/runtime/shape_program.h"
#include "relax/support/error.h"

namespace relax::runtime {
namespace {

struct DimCheck {
  int64_t buffer, axis, kind, value;
  std::vector<int64_t> program;  // kind 3
};

void Check(const char* kernel, const int64_t* sig, const RelaxValue* args, int32_t num_args) {
  const std::string k = std::string("kernel '") + (kernel ? kernel : "?") + "'";
  if (!sig || (sig[0] != 1 && sig[0] != 2)) RELAX_THROW(k << ": bad argument signature");
  const bool any_device = sig[0] == 2;
  const int64_t nargs = sig[1], nbuf = sig[2], nslots = sig[3];
  if (num_args != nargs) RELAX_THROW(k << ": expected " << nargs << " arguments, got " << num_args);
  if (!args && nargs > 0) RELAX_THROW(k << ": null argument array");
  std::vector<int64_t> slots(static_cast<size_t>(nslots), 0);
  std::vector<DimCheck> later;
  size_t p = 4;
  for (int64_t b = 0; b < nbuf; ++b) {
    const std::string a = k + ": argument " + std::to_string(b);
    const int64_t code = sig[p], bits = sig[p + 1], lanes = sig[p + 2], ndim = sig[p + 3];
    p += 4;
    if (args[b].type_code != kRelaxTensor || !args[b].v_handle)
      RELAX_THROW(a << " must be a tensor (type code " << args[b].type_code << ")");
    const DLTensor* t = static_cast<const DLTensor*>(args[b].v_handle);
    DLDataType want{static_cast<uint8_t>(code), static_cast<uint8_t>(bits),
                    static_cast<uint16_t>(lanes)};
    if (!DTypeEqual(t->dtype, want))
      RELAX_THROW(a << " has dtype " << DTypeToString(t->dtype) << ", expected "
                    << DTypeToString(want));
    if (t->ndim != ndim) RELAX_THROW(a << " has " << t->ndim << " dims, expected " << ndim);
    if (t->device.device_type != kDLCPU && !any_device)
      RELAX_THROW(a << " is on " << DeviceToString(t->device) << ", not in host memory");
    if (t->byte_offset != 0) RELAX_THROW(a << " has a non-zero byte offset");
    if (ndim > 0 && !t->shape) RELAX_THROW(a << " has no shape");
    int64_t numel = 1;
    for (int64_t d = 0; d < ndim; ++d) {
      if (t->shape[d] < 0) RELAX_THROW(a << ": dim " << d << " is negative");
      if (__builtin_mul_overflow(numel, t->shape[d], &numel))
        RELAX_THROW(a << ": element count overflows");
    }
    if (t->strides) {
      int64_t expect = 1;
      for (int64_t d = ndim - 1; d >= 0; --d) {
        if (t->shape[d] != 1 && t->strides[d] != expect) RELAX_THROW(a << " is not compact");
        expect *= t->shape[d];
      }
    }
    if (numel > 0 && !t->data) RELAX_THROW(a << " has no data");
    for (int64_t d = 0; d < ndim; ++d) {
      const int64_t kind = sig[p++];
      const int64_t got = t->shape[d];
      switch (kind) {
        case 0:
          if (got != sig[p])
            RELAX_THROW(a << ": dim " << d << " is " << got << ", expected " << sig[p]);
          ++p;
          break;
        case 1:
          slots.at(static_cast<size_t>(sig[p++])) = got;
          break;
        case 2:
          later.push_back({b, d, 2, sig[p++], {}});
          break;
        case 3: {
          const int64_t ntok = sig[p++];
          DimCheck c{b, d, 3, 0, {1, ntok}};
          c.program.insert(c.program.end(), sig + p, sig + p + 2 * ntok);
          p += static_cast<size_t>(2 * ntok);
          later.push_back(std::move(c));
          break;
        }
        case 4:
          break;
        default:
          RELAX_THROW(k << ": bad argument signature");
      }
    }
  }
  for (int64_t i = nbuf; i < nargs; ++i) {
    const int64_t slot = sig[p++];
    if (args[i].type_code != kRelaxInt)
      RELAX_THROW(k << ": argument " << i << " must be an int (type code " << args[i].type_code
                    << ")");
    slots.at(static_cast<size_t>(slot)) = args[i].v_int64;
  }
  for (const DimCheck& c : later) {
    const DLTensor* t = static_cast<const DLTensor*>(args[c.buffer].v_handle);
    const int64_t got = t->shape[c.axis];
    const int64_t want = c.kind == 2 ? slots.at(static_cast<size_t>(c.value))
                                     : EvalShapeProgram(slots, c.program, false)[0];
    if (got != want)
      RELAX_THROW(k << ": argument " << c.buffer << ": dim " << c.axis << " is " << got
                    << ", expected " << want << " (from the other arguments)");
  }
}

}  // namespace
}  // namespace relax::runtime

extern "C" int32_t RelaxCheckKernelArgs(const char* kernel, const int64_t* sig,
                                        const RelaxValue* args, int32_t num_args) {
  try {
    relax::runtime::Check(kernel, sig, args, num_args);
    return 0;
  } catch (const std::exception& e) {
    RelaxSetLastError(e.what());
    return 1;
  } catch (...) {
    RelaxSetLastError("kernel argument check failed");
    return 1;
  }
}
