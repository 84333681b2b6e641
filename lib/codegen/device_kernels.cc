// Device kernels of a split module and their launch-table entries (see the header).
#include "relax/codegen/device_kernels.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "relax/codegen/host_codegen.h"
#include "relax/ir/tir_functor.h"
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
  if (auto it = f->attrs.find("host_func"); it != f->attrs.end()) s.host = it->second;
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

namespace relax::codegen {

namespace {

// Thread-bound loops become serial: the body's guards keep every element computed once.
class Unbind : public tir::StmtMutator {
 protected:
  tir::Stmt VisitStmt_(const tir::ForNode* op, const tir::Stmt& s) override {
    tir::Stmt r = tir::StmtMutator::VisitStmt_(op, s);
    if (op->for_kind != tir::ForKind::kThreadBinding) return r;
    auto n = std::make_shared<tir::ForNode>(*tir::As<tir::ForNode>(r));
    n->for_kind = tir::ForKind::kSerial;
    n->thread_tag.clear();
    return n;
  }
};

// Launches of kernel `index` get grid (1, 1, 1).
class OneBlockLaunch : public tir::StmtMutator {
 public:
  explicit OneBlockLaunch(int64_t index) : index_(index) {}

 protected:
  tir::Stmt VisitStmt_(const tir::EvaluateNode* op, const tir::Stmt& s) override {
    const auto* call = op->value.as<tir::CallNode>();
    int64_t k;
    if (!call || call->op != "launch_kernel" || call->args.size() < 4 || !call->args[0].AsInt(&k) ||
        k != index_)
      return s;
    std::vector<PrimExpr> args = call->args;
    args[1] = args[2] = args[3] = PrimExpr(1);
    return tir::Evaluate(CallIntrin("launch_kernel", std::move(args), call->dtype));
  }

 private:
  int64_t index_;
};

// True if `s` calls T.barrier() (threads of a block cooperate: no one-thread form exists).
bool HasBarrier(const tir::Stmt& s) {
  struct Finder : tir::StmtVisitor {
    bool found = false;
    using tir::StmtVisitor::VisitStmt;
    void VisitExpr_(const tir::CallNode* op, const PrimExpr& e) override {
      found = found || op->op == "barrier" || op->op == "warp_shuffle_down";
      tir::StmtVisitor::VisitExpr_(op, e);
    }
  } f;
  f.VisitStmt(s);
  return f.found;
}

// Bytes of the `shared` allocs of kernel body `s` (constant sizes; the split checks them).
int SharedBytes(const tir::Stmt& s) {
  struct Counter : tir::StmtVisitor {
    int64_t bytes = 0;
    using tir::StmtVisitor::VisitStmt;
    void VisitStmt_(const tir::AllocateNode* op, const tir::Stmt& st) override {
      int64_t n;
      if (op->buffer->scope == "shared" && op->buffer->shape[0].AsInt(&n))
        bytes += n * ((op->buffer->dtype.bits + 7) / 8);
      tir::StmtVisitor::VisitStmt_(op, st);
    }
  } c;
  c.VisitStmt(s);
  return static_cast<int>(c.bytes);
}

void ApplyFallback(IRModule* mod, const tir::PrimFunc& k, int64_t index) {
  // Serializing the threads of a block that synchronize at barriers would run each thread's
  // phases before the others' (the cross-thread reduction's tree would read partial sums not yet
  // written).
  if (HasBarrier(k->body))
    RELAX_THROW(
        "its threads synchronize at barriers (shared memory), so it has no one-thread "
        "form");
  auto n = std::make_shared<tir::PrimFuncNode>(*k);
  n->body = Unbind().VisitStmt(k->body);
  n->attrs["block"] = "1,1,1";
  n->attrs["grid"] = "1";
  n->attrs["schedule"] = Attr(k, "schedule") + " -> one-thread fallback";
  mod->prim_funcs[k->name] = n;
  for (auto& [name, f] : mod->prim_funcs)
    if (f->attrs.count("host_of")) {
      tir::Stmt body = OneBlockLaunch(index).VisitStmt(f->body);
      if (body != f->body) {
        auto h = std::make_shared<tir::PrimFuncNode>(*f);
        h->body = body;
        f = h;
      }
    }
}

}  // namespace

DeviceBuild BuildDeviceKernels(const IRModule& mod, const Target& target,
                               const CodegenOptions& options,
                               const std::function<CompiledKernel(const tir::PrimFunc&)>& compile) {
  DeviceBuild out{mod, {}, {}};
  out.table.target = target.ToString();
  const char* broken = std::getenv("RELAX_TEST_BREAK_KERNEL");
  std::vector<tir::PrimFunc> kernels = DeviceKernels(mod);
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (options.progress) options.progress("device kernels", i, kernels.size());
    tir::PrimFunc f = kernels[i];
    KernelReport report;
    report.name = f->name;
    report.rule = Attr(f, "schedule");
    CompiledKernel ck;
    try {
      if (broken && f->name == broken)
        RELAX_THROW("RELAX_TEST_BREAK_KERNEL names this kernel (test hook)");
      ck = compile(f);
    } catch (const Error& e) {
      report.fallback = true;
      report.failure = e.what();
      if (options.warnings)
        *options.warnings << "warning: kernel '" << f->name << "' (schedule rule '" << report.rule
                          << "') failed: " << e.what()
                          << "; falling back to the one-thread schedule\n";
      try {
        ApplyFallback(&out.mod, f, static_cast<int64_t>(i));
        f = out.mod.prim_funcs.at(f->name);
        ck = compile(f);
      } catch (const Error& e2) {
        RELAX_THROW("kernel '" << f->name << "' failed with schedule rule '" << report.rule << "' ("
                               << e.what() << ") and with the one-thread fallback: " << e2.what());
      }
    }
    runtime::KernelSpec spec = KernelSpecOf(f);
    // ptxas reports the shared memory of CUDA kernels; for the others it is the kernel's
    // shared allocs.
    if (ck.shared_bytes == 0) ck.shared_bytes = SharedBytes(f->body);
    spec.shared_bytes = static_cast<uint32_t>(ck.shared_bytes);
    spec.push_constants = ck.push_constants;
    while (out.device.size() % 16) out.device.push_back('\0');
    spec.binary_offset = out.device.size();
    spec.binary_size = ck.binary.size();
    out.device += ck.binary;
    if (!out.table.format.empty() && out.table.format != ck.format)
      RELAX_THROW("kernel '" << f->name << "' is " << ck.format << ", the others "
                             << out.table.format);
    out.table.format = ck.format;
    out.table.kernels.push_back(std::move(spec));
    report.registers = ck.registers;
    report.spill_bytes = ck.spill_bytes;
    report.shared_bytes = ck.shared_bytes;
    report.binary_bytes = ck.binary.size();
    if (options.kernel_report) options.kernel_report->push_back(std::move(report));
  }
  if (options.progress) options.progress("device kernels", kernels.size(), kernels.size());
  return out;
}

std::string BuildGpuKernels(const IRModule& mod, const Target& target,
                            const CodegenOptions& options, std::vector<BackendSection>* sections,
                            const std::function<CompiledKernel(const tir::PrimFunc&)>& compile) {
  DeviceBuild dev = BuildDeviceKernels(mod, target, options, compile);
  // The host parts last: a kernel's one-thread fallback changes its launches.
  std::string target_section;
  std::string so =
      BuildHostLibrary(dev.mod, HostTarget::FromTarget(target), options, &target_section);
  if (sections) {
    sections->push_back({"target", std::move(target_section), 8});
    if (!dev.table.kernels.empty()) {  // everything folded or on the host: a plain artifact
      sections->push_back({"launch", dev.table.ToJSON(), 8});
      sections->push_back({"device", std::move(dev.device), 16});
    }
  }
  return so;
}

}  // namespace relax::codegen
