// Pass registry and the instrumented pass runner.
#include "relax/transform/pass.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>

#include "relax/support/error.h"

namespace relax {

namespace {
std::map<std::string, Pass>& Registry() {
  static std::map<std::string, Pass> r;
  return r;
}
}  // namespace

void RegisterPass(Pass p) {
  RELAX_ICHECK(!Registry().count(p.name));
  std::string n = p.name;
  Registry().emplace(n, std::move(p));
}

const Pass* FindPass(const std::string& name) {
  auto it = Registry().find(name);
  return it == Registry().end() ? nullptr : &it->second;
}

std::vector<const Pass*> ListPasses() {
  std::vector<const Pass*> out;
  for (const auto& [n, p] : Registry()) out.push_back(&p);
  return out;
}

void CheckPassOptions(const PassContext& ctx) {
  for (const auto& [key, value] : ctx.options) {
    bool known = false;
    std::string all;
    for (const Pass* p : ListPasses())
      for (const auto& k : p->option_keys) {
        known = known || k == key;
        all += (all.empty() ? "" : ", ") + k;
      }
    if (!known)
      RELAX_THROW("unknown pass option '" << key << "' (known: " << (all.empty() ? "none" : all)
                                          << ")");
  }
  for (const Pass* p : ListPasses())
    if (p->check_options) p->check_options(ctx);
}

void PassRunner::Run(IRModule* mod, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    const Pass* p = FindPass(name);
    if (!p) {
      std::string known;
      for (const Pass* q : ListPasses()) known += (known.empty() ? "" : ", ") + q->name;
      RELAX_THROW("unknown pass '" << name << "' (registered passes: " << known << ")");
    }
    if (opts_.on_stage) opts_.on_stage(name);
    auto t0 = std::chrono::steady_clock::now();
    p->run(mod, ctx_);
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    timings_.push_back({name, ms});
    if (opts_.verify_each) {
      try {
        VerifyWellFormed(*mod);
      } catch (const Error& e) {
        RELAX_THROW("IR is not well-formed after pass '" << name << "': " << e.what());
      }
    }
    if (WantsDump(name)) Stage(name, ToString(*mod));
    if (opts_.after_pass) opts_.after_pass(name, *mod);
  }
}

void PassRunner::Stage(const std::string& name, const std::string& text) {
  if (!WantsDump(name)) return;
  std::ostream& os = opts_.out ? *opts_.out : std::cerr;
  os << "// ----- IR after " << name << " -----\n" << text << "\n";
}

void PassRunner::Finish() {
  if (!opts_.time_passes) return;
  std::ostream& os = opts_.out ? *opts_.out : std::cerr;
  double total = 0;
  for (const auto& [n, ms] : timings_) total += ms;
  os << "===-- pass execution timing report --===\n";
  for (const auto& [n, ms] : timings_) {
    char buf[128];
    snprintf(buf, sizeof(buf), "  %10.3f ms  %5.1f%%  %s\n", ms, total > 0 ? 100 * ms / total : 0,
             n.c_str());
    os << buf;
  }
  char buf[64];
  snprintf(buf, sizeof(buf), "  %10.3f ms  total\n", total);
  os << buf;
}

}  // namespace relax
