// The op registry table.
#include <algorithm>
#include <map>
#include <mutex>

#include "relax/op/op.h"
#include "relax/support/error.h"

namespace relax {

namespace {
std::map<std::string, OpInfo>& Table() {
  static std::map<std::string, OpInfo> t;
  return t;
}
void EnsureRegistered() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterElementwiseOps();
    RegisterNNOps();
    RegisterTensorOps();
    RegisterReduceOps();
    RegisterBuiltinOps();
    RegisterMathOps();
    RegisterLogicOps();
    RegisterActivationOps();
    RegisterLossOps();
    RegisterPoolOps();
    RegisterResizeOp();
    RegisterRecurrentOps();
    RegisterSamplingOps();
    RegisterLinalgOps();
    RegisterRearrangeOps();
    RegisterMemoryOps();
  });
}
}  // namespace

const char* ToString(OpPatternKind k) {
  switch (k) {
    case OpPatternKind::kElemWise:
      return "elemwise";
    case OpPatternKind::kBroadcast:
      return "broadcast";
    case OpPatternKind::kInjective:
      return "injective";
    case OpPatternKind::kCommReduce:
      return "comm-reduce";
    case OpPatternKind::kOutEWiseFusable:
      return "out-ewise-fusable";
    case OpPatternKind::kTuple:
      return "tuple";
    case OpPatternKind::kOpaque:
      return "opaque";
  }
  return "?";
}

void RegisterOp(OpInfo info) {
  auto& t = Table();
  RELAX_ICHECK(!t.count(info.name));
  std::string name = info.name;
  t.emplace(name, std::move(info));
}

void RegisterOp(std::string name, OpPatternKind pattern, FInferStructInfo infer, FTECompute compute,
                bool pure) {
  OpInfo info;
  info.name = std::move(name);
  info.pattern = pattern;
  info.infer = std::move(infer);
  info.compute = std::move(compute);
  info.pure = pure;
  RegisterOp(std::move(info));
}

const OpInfo* LookupOp(const std::string& name) {
  EnsureRegistered();
  auto it = Table().find(name);
  return it == Table().end() ? nullptr : &it->second;
}

std::vector<std::string> ListOps() {
  EnsureRegistered();
  std::vector<std::string> names;
  for (const auto& [n, i] : Table()) names.push_back(n);
  return names;
}

}  // namespace relax
