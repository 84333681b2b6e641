// ReleaseDeadRegisters: backward liveness over the bytecode CFG, then release insertion.
#include "relax/lower/vm_register_release.h"

#include <vector>

#include "relax/support/error.h"

namespace relax {

namespace {

using runtime::Arg;
using runtime::Instruction;

// A dense bit set over registers.
struct RegSet {
  std::vector<uint64_t> w;
  explicit RegSet(size_t n = 0) : w((n + 63) / 64, 0) {}
  void Set(int64_t r) { w[static_cast<size_t>(r) / 64] |= uint64_t{1} << (r % 64); }
  void Reset(int64_t r) { w[static_cast<size_t>(r) / 64] &= ~(uint64_t{1} << (r % 64)); }
  bool Test(int64_t r) const { return (w[static_cast<size_t>(r) / 64] >> (r % 64)) & 1; }
  bool UnionWith(const RegSet& o) {
    bool changed = false;
    for (size_t i = 0; i < w.size(); ++i) {
      uint64_t n = w[i] | o.w[i];
      changed |= n != w[i];
      w[i] = n;
    }
    return changed;
  }
};

std::vector<int64_t> Uses(const Instruction& in) {
  std::vector<int64_t> u;
  switch (in.op) {
    case Instruction::kCall:
      for (const Arg& a : in.args)
        if (a.kind == Arg::kReg) u.push_back(a.value);
      break;
    case Instruction::kRet:
      u.push_back(in.reg);
      break;
    case Instruction::kIf:
      u.push_back(in.cond);
      break;
    case Instruction::kGoto:
      break;
  }
  return u;
}

std::vector<size_t> Successors(const Instruction& in, size_t pc, size_t n) {
  std::vector<int64_t> s;
  switch (in.op) {
    case Instruction::kCall:
      s = {static_cast<int64_t>(pc) + 1};
      break;
    case Instruction::kRet:
      break;
    case Instruction::kGoto:
      s = {static_cast<int64_t>(pc) + in.offset};
      break;
    case Instruction::kIf:
      s = {static_cast<int64_t>(pc) + 1, static_cast<int64_t>(pc) + in.offset};
      break;
  }
  std::vector<size_t> out;
  for (int64_t t : s) {
    if (t < 0 || t >= static_cast<int64_t>(n))
      RELAX_THROW("VM codegen: jump from pc " << pc << " to " << t << " leaves the code");
    out.push_back(static_cast<size_t>(t));
  }
  return out;
}

Instruction ReleaseOf(int64_t reg) {
  Instruction rel;
  rel.op = Instruction::kCall;
  rel.func = "vm.builtin.release";
  rel.dst = reg;
  return rel;
}

}  // namespace

void ReleaseDeadRegisters(runtime::Function* f, int64_t keep) {
  const size_t n = f->code.size();
  const size_t nregs = static_cast<size_t>(f->num_regs);
  std::vector<std::vector<size_t>> succ(n);
  for (size_t pc = 0; pc < n; ++pc) succ[pc] = Successors(f->code[pc], pc, n);
  std::vector<RegSet> live_in(n, RegSet(nregs)), live_out(n, RegSet(nregs));
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t k = n; k-- > 0;) {
      RegSet out(nregs);
      for (size_t s : succ[k]) out.UnionWith(live_in[s]);
      RegSet in = out;
      const Instruction& ins = f->code[k];
      if (ins.op == Instruction::kCall && ins.dst >= 0) in.Reset(ins.dst);
      for (int64_t r : Uses(ins)) in.Set(r);
      changed |= live_out[k].UnionWith(out);
      changed |= live_in[k].UnionWith(in);
    }
  }
  auto releasable = [&](int64_t r) { return r >= 0 && r != keep; };
  std::vector<std::vector<int64_t>> before(n), after(n);
  for (size_t pc = 0; pc < n; ++pc) {
    const Instruction& ins = f->code[pc];
    if (ins.op == Instruction::kCall) {
      std::vector<int64_t> touched = Uses(ins);
      if (ins.dst >= 0) touched.push_back(ins.dst);
      for (int64_t r : touched)
        if (releasable(r) && !live_out[pc].Test(r)) {
          bool dup = false;
          for (int64_t x : after[pc]) dup |= x == r;
          if (!dup) after[pc].push_back(r);
        }
    } else if (ins.op == Instruction::kIf) {
      for (size_t s : succ[pc])
        for (size_t r = 0; r < nregs; ++r)
          if (live_in[pc].Test(static_cast<int64_t>(r)) &&
              !live_in[s].Test(static_cast<int64_t>(r)) && releasable(static_cast<int64_t>(r))) {
            bool dup = false;
            for (int64_t x : before[s]) dup |= x == static_cast<int64_t>(r);
            if (!dup) before[s].push_back(static_cast<int64_t>(r));
          }
    }
  }
  // Rebuild: [releases at the start of pc] [pc] [releases after pc]; jumps go to the start.
  std::vector<size_t> start(n), at(n);
  std::vector<Instruction> code;
  for (size_t pc = 0; pc < n; ++pc) {
    start[pc] = code.size();
    for (int64_t r : before[pc]) code.push_back(ReleaseOf(r));
    at[pc] = code.size();
    code.push_back(f->code[pc]);
    for (int64_t r : after[pc]) code.push_back(ReleaseOf(r));
  }
  for (size_t pc = 0; pc < n; ++pc) {
    Instruction& ins = code[at[pc]];
    if (ins.op == Instruction::kGoto || ins.op == Instruction::kIf) {
      size_t target = static_cast<size_t>(static_cast<int64_t>(pc) + ins.offset);
      ins.offset = static_cast<int64_t>(start[target]) - static_cast<int64_t>(at[pc]);
    }
  }
  f->code = std::move(code);
}

}  // namespace relax
