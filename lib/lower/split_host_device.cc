// SplitHostDevice: device kernels out of GPU PrimFuncs, launches in their host part (see the
// header).
#include "relax/lower/split_host_device.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>
#include <string>

#include "relax/ir/tir_functor.h"
#include "relax/lower/outline_parallel.h"
#include "relax/support/error.h"

namespace relax {

namespace {

// The first loop bound to `tag` in `s`, or null.
const tir::ForNode* FindBound(const tir::Stmt& s, const std::string& tag) {
  if (!s) return nullptr;
  switch (s->kind) {
    case tir::StmtKind::kFor: {
      const auto* f = tir::As<tir::ForNode>(s);
      if (f->for_kind == tir::ForKind::kThreadBinding && f->thread_tag == tag) return f;
      return FindBound(f->body, tag);
    }
    case tir::StmtKind::kLet:
      return FindBound(tir::As<tir::LetStmtNode>(s)->body, tag);
    case tir::StmtKind::kIf: {
      const auto* i = tir::As<tir::IfThenElseNode>(s);
      const tir::ForNode* r = FindBound(i->then_case, tag);
      return r ? r : FindBound(i->else_case, tag);
    }
    case tir::StmtKind::kSeq:
      for (const auto& c : tir::As<tir::SeqStmtNode>(s)->seq)
        if (const tir::ForNode* r = FindBound(c, tag)) return r;
      return nullptr;
    case tir::StmtKind::kAllocate:
      return FindBound(tir::As<tir::AllocateNode>(s)->body, tag);
    default:
      return nullptr;
  }
}

// Which buffers a statement stores to / loads from.
class AccessCollector : public tir::StmtVisitor {
 public:
  std::vector<const BufferNode*> stored, loaded;
  bool has_alloc = false;
  using tir::StmtVisitor::VisitExpr;
  using tir::StmtVisitor::VisitStmt;

 protected:
  void VisitStmt_(const tir::BufferStoreNode* op, const tir::Stmt& s) override {
    stored.push_back(op->buffer.get());
    tir::StmtVisitor::VisitStmt_(op, s);
  }
  void VisitStmt_(const tir::AllocateNode* op, const tir::Stmt& s) override {
    // Shared (per block) and local (per thread) scratch live in the kernel.
    if (op->buffer->scope != "shared" && op->buffer->scope != "local") has_alloc = true;
    tir::StmtVisitor::VisitStmt_(op, s);
  }
  void VisitExpr_(const tir::BufferLoadNode* op, const PrimExpr& e) override {
    loaded.push_back(op->buffer.get());
    tir::StmtVisitor::VisitExpr_(op, e);
  }
};

// Replaces buffers by their kernel views.
class BufferRenamer : public tir::StmtMutator {
 public:
  std::map<const BufferNode*, Buffer> map;
  using tir::StmtMutator::VisitStmt;
  Buffer VisitBuffer(const Buffer& b) override {
    auto it = map.find(b.get());
    return it == map.end() ? b : it->second;
  }
};

bool Contains(const std::vector<const BufferNode*>& v, const BufferNode* b) {
  return std::find(v.begin(), v.end(), b) != v.end();
}

class Splitter {
 public:
  explicit Splitter(IRModule* mod) : mod_(mod) {
    for (const auto& [name, f] : mod->prim_funcs)
      if (f->attrs.count("device_kernel")) ++next_index_;
  }

  void Run(const std::string& name) {
    tir::PrimFunc f = mod_->prim_funcs.at(name);
    // Peel the allocs: they stay on the host.
    std::vector<Buffer> allocs;
    tir::Stmt body = f->body;
    while (const auto* a = tir::As<tir::AllocateNode>(body)) {
      allocs.push_back(a->buffer);
      body = a->body;
    }
    std::vector<tir::Stmt> parts;
    if (const auto* seq = tir::As<tir::SeqStmtNode>(body))
      parts = seq->seq;
    else
      parts = {body};
    std::vector<tir::Stmt> host;
    int k = 0;
    for (const auto& part : parts) host.push_back(MakeKernel(f, part, k++));
    tir::Stmt hbody = host.size() == 1 ? host[0] : tir::Seq(host);
    for (size_t i = allocs.size(); i-- > 0;) hbody = tir::Allocate(allocs[i], hbody);
    auto h = std::make_shared<tir::PrimFuncNode>(*f);
    h->body = hbody;
    h->attrs.erase("device");
    h->attrs["host_of"] = f->attrs.at("device");
    h->attrs["num_kernels"] = std::to_string(k);
    mod_->prim_funcs[name] = h;
  }

 private:
  tir::Stmt MakeKernel(const tir::PrimFunc& f, const tir::Stmt& part, int k) {
    // Kernel names are identifiers in every device format (PTX refuses '.').
    std::string kname = f->name + "_kernel" + std::to_string(k);
    for (char& ch : kname)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_') ch = '_';
    if (mod_->prim_funcs.count(kname) || mod_->functions.count(kname))
      kname = mod_->FreshName(kname);
    AccessCollector acc;
    acc.VisitStmt(part);
    if (acc.has_alloc)
      RELAX_THROW("PrimFunc '" << f->name << "': kernel " << k
                               << " allocates global scratch memory inside the kernel, which "
                                  "GPU targets do not support yet (only shared and local)");
    const tir::ForNode* bx = FindBound(part, "blockIdx.x");
    const tir::ForNode* tx = FindBound(part, "threadIdx.x");
    int64_t threads = 1;
    if (tx && !tx->extent.AsInt(&threads))
      RELAX_THROW("PrimFunc '" << f->name << "': the threadIdx.x loop '" << VarName(tx->loop_var)
                               << "' has extent " << ToString(tx->extent)
                               << "; GPU kernels need a constant block size");
    PrimExpr grid = bx ? bx->extent : PrimExpr(1);
    Closure c = CollectClosure(part);
    std::string access;
    for (const auto& b : c.buffers) {
      bool w = Contains(acc.stored, b.get()), r = Contains(acc.loaded, b.get());
      access += std::string(access.empty() ? "" : ",") + (w && r ? "rw" : w ? "w" : "r");
    }
    // The kernel's buffers are views of the host's with their own length var (bound by the
    // buffer, never read: the host passes byte sizes), so the dims the body uses are plain
    // scalar parameters and the kernel prints and parses back as it is.
    BufferRenamer views;
    std::vector<Buffer> kbufs;
    for (const auto& b : c.buffers) {
      Buffer v = MakeBuffer(b->name, b->dtype, {MakeVar("len_" + b->name)}, b->scope);
      views.map[b.get()] = v;
      kbufs.push_back(v);
    }
    auto kn = std::make_shared<tir::PrimFuncNode>();
    kn->name = kname;
    kn->buffers = kbufs;
    kn->scalar_params = c.vars;
    kn->body = views.VisitStmt(part);
    kn->num_outputs = 0;
    for (const auto& b : kbufs) kn->param_shapes.push_back(b->shape);
    kn->attrs["device_kernel"] = f->attrs.at("device");
    kn->attrs["kernel_index"] = std::to_string(next_index_);
    kn->attrs["host_func"] = f->name;  // the host PrimFunc that launches it
    kn->attrs["block"] = std::to_string(threads) + ",1,1";
    kn->attrs["grid"] = ToString(grid);
    kn->attrs["access"] = access;
    auto rule = f->attrs.find("schedule");
    kn->attrs["schedule"] = rule == f->attrs.end() ? "(fallback: one thread)" : rule->second;
    // A multi-stage rule's kernels: "<rule>:<the stage's schedule>".
    auto forms = f->attrs.find("stage_schedules");
    if (rule != f->attrs.end() && forms != f->attrs.end()) {
      std::stringstream in(forms->second);
      std::string form;
      for (int i = 0; i <= k; ++i)
        if (!std::getline(in, form, ',')) {
          form.clear();
          break;
        }
      if (!form.empty()) kn->attrs["schedule"] += ":" + form;
    }
    mod_->AddPrimFunc(kname, kn);

    std::vector<PrimExpr> args = {IntImm(next_index_++, DataType::Int(32)), grid, PrimExpr(1),
                                  PrimExpr(1)};
    for (const auto& b : c.buffers)
      args.push_back(CallIntrin("address_of", {Load(b, {PrimExpr(0)})}, DataType::Int(64)));
    for (const auto& v : c.vars) args.push_back(v);
    return tir::Evaluate(CallIntrin("launch_kernel", std::move(args), DataType::Int(32)));
  }

  IRModule* mod_;
  int64_t next_index_ = 0;
};

}  // namespace

void SplitHostDevice(IRModule* mod) {
  std::vector<std::string> names;
  for (const auto& name : mod->order) {
    auto it = mod->prim_funcs.find(name);
    if (it != mod->prim_funcs.end() && it->second->attrs.count("device")) names.push_back(name);
  }
  Splitter s(mod);
  for (const auto& n : names) s.Run(n);
}

}  // namespace relax
