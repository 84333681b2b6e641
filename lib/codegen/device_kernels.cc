// Device kernels of a split module and their launch-table entries (see the header).
#include "relax/codegen/device_kernels.h"

#include <algorithm>
#include <sstream>

#include "relax/support/error.h"

namespace relax::codegen {

namespace {
const std::string& Attr(const tir::PrimFunc& f, const std::string& key) {
  auto it = f->attrs.find(key);
  if (it == f->attrs.end())
    RELAX_THROW("device kernel '" << f->name << "' has no `" << key << "` attribute");
  return it->second;
}
std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ',')) out.push_back(part);
  return out;
}
}  // namespace

std::vector<tir::PrimFunc> DeviceKernels(const IRModule& mod) {
  std::vector<std::pair<int64_t, tir::PrimFunc>> ks;
  for (const auto& [name, f] : mod.prim_funcs)
    if (f->attrs.count("device_kernel")) {
      int64_t index = -1;
      try {
        index = std::stoll(Attr(f, "kernel_index"));
      } catch (const std::exception&) {
      }
      ks.push_back({index, f});
    }
  std::sort(ks.begin(), ks.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<tir::PrimFunc> out;
  for (size_t i = 0; i < ks.size(); ++i) {
    if (ks[i].first != static_cast<int64_t>(i))
      RELAX_THROW("device kernel '" << ks[i].second->name << "' has kernel_index " << ks[i].first
                                    << "; the module's kernels must be numbered 0.."
                                    << ks.size() - 1);
    out.push_back(ks[i].second);
  }
  return out;
}

runtime::KernelSpec KernelSpecOf(const tir::PrimFunc& f) {
  runtime::KernelSpec s;
  s.name = f->name;
  std::vector<std::string> access = SplitComma(Attr(f, "access"));
  if (access.size() != f->buffers.size())
    RELAX_THROW("device kernel '" << f->name << "': `access` lists " << access.size()
                                  << " buffers, the kernel has " << f->buffers.size());
  for (const auto& a : access) {
    if (a == "r")
      s.params.push_back(runtime::KernelParamKind::kBufferRead);
    else if (a == "w")
      s.params.push_back(runtime::KernelParamKind::kBufferWrite);
    else if (a == "rw")
      s.params.push_back(runtime::KernelParamKind::kBufferReadWrite);
    else
      RELAX_THROW("device kernel '" << f->name << "': unknown access '" << a << "'");
  }
  for (size_t i = 0; i < f->scalar_params.size(); ++i)
    s.params.push_back(runtime::KernelParamKind::kScalar);
  std::vector<std::string> block = SplitComma(Attr(f, "block"));
  if (block.size() != 3) RELAX_THROW("device kernel '" << f->name << "': `block` is not x,y,z");
  for (int d = 0; d < 3; ++d) s.block[d] = static_cast<uint32_t>(std::stoul(block[d]));
  s.grid_exprs = {Attr(f, "grid"), "1", "1"};
  auto rule = f->attrs.find("schedule");
  s.rule = rule == f->attrs.end() ? "" : rule->second;
  return s;
}

}  // namespace relax::codegen
