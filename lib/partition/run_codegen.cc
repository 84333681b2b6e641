// run-codegen (relax/partition/run_codegen.h): each region goes to its plugin's codegen and
// becomes a destination-passing extern call.
#include "relax/partition/run_codegen.h"

#include <set>

#include "relax/ir/expr_functor.h"
#include "relax/partition/plugin.h"
#include "relax/partition/report.h"
#include "relax/support/error.h"
#include "relax/support/utf8.h"

namespace relax::partition {

namespace {

class RegionLowerer : public ExprMutator {
 public:
  RegionLowerer(IRModule* mod, Target target, PartitionReport* report)
      : mod_(mod), target_(std::move(target)), report_(report) {}

  Expr VisitExpr_(const CallNode* op, const Expr& e) override {
    Expr visited = ExprMutator::VisitExpr_(op, e);
    const CallNode* c = As<CallNode>(visited);
    const GlobalVarNode* gv = c ? As<GlobalVarNode>(c->op) : nullptr;
    const FunctionNode* fn = gv ? mod_->GetFunction(gv->name) : nullptr;
    if (!fn || !fn->attrs.count(kCodegenAttr)) return visited;
    std::string plugin_name = std::get<std::string>(fn->attrs.at(kCodegenAttr));
    const CodegenPlugin* plugin = FindPlugin(plugin_name);
    if (!plugin)
      RELAX_THROW("region @" << gv->name << " is tagged for codegen plugin '" << plugin_name
                             << "', which is not loaded");
    Region region = MakeRegion(*mod_, gv->name, c->args);
    RegionCode code;
    try {
      code = plugin->Codegen(region, target_);
    } catch (const std::exception& ex) {
      RELAX_THROW("codegen plugin '" << plugin_name << "' failed on region '" << gv->name
                                     << "': " << ex.what());
    }
    if (code.function.empty())
      RELAX_THROW("codegen plugin '" << plugin_name << "' failed on region '" << gv->name
                                     << "': it returned no runtime function name");
    // The function name and payload are stored in the artifact's JSON sections.
    for (const auto& [what, text] :
         {std::pair<const char*, const std::string*>{"runtime function name", &code.function},
          {"payload", &code.payload}})
      if (!IsValidUtf8(*text))
        RELAX_THROW("codegen plugin '" << plugin_name << "' failed on region '" << gv->name
                                       << "': its " << what << " is not valid UTF-8 ('"
                                       << EscapeBytes(text->substr(0, 64)) << "')");
    mod_->extern_modules.push_back({plugin_name, gv->name, code.function, std::move(code.object),
                                    code.library, code.operands_on_device});
    if (PartitionReport* rep = report_)
      rep->regions.push_back({plugin_name, gv->name, code.function, region.composites});
    regions_.insert(gv->name);
    std::vector<Expr> args;
    if (!code.payload.empty()) args.push_back(MakeStringImm(code.payload));
    args.insert(args.end(), c->args.begin(), c->args.end());
    Expr tuple = MakeTuple(args);
    std::vector<StructInfo> fs;
    for (const auto& a : args) fs.push_back(a->sinfo ? a->sinfo : ObjectSInfo());
    tuple = WithSInfo(tuple, TupleSInfo(fs));
    Expr call = MakeCall(GetOp("relax.call_dps_library"), {MakeExternFunc(code.function), tuple},
                         {}, {fn->ret_sinfo});
    return WithSInfo(call, fn->ret_sinfo);
  }

  const std::set<std::string>& regions() const { return regions_; }

 private:
  IRModule* mod_;
  Target target_;
  PartitionReport* report_;
  std::set<std::string> regions_;
};

}  // namespace

void RunCodegen(IRModule* mod, const PassContext& ctx) {
  bool any = false;
  for (const auto& [name, f] : mod->functions)
    if (As<FunctionNode>(f)->attrs.count(kCodegenAttr)) any = true;
  if (!any) return;
  RegionLowerer lowerer(mod, Target::Parse(ctx.target), ctx.partition_report);
  lowerer.MutateModule(mod, [](const FunctionNode* f) {
    return f->attrs.count(kCompositeAttr) || f->attrs.count(kCodegenAttr) ||
           f->attrs.count("Primitive");
  });
  // The regions and their composites are compiled: they leave the module.
  std::set<std::string> drop;
  for (const auto& [name, f] : mod->functions) {
    const FunctionNode* fn = As<FunctionNode>(f);
    if (fn->attrs.count(kCompositeAttr) || fn->attrs.count(kCodegenAttr)) drop.insert(name);
  }
  for (const auto& name : drop) mod->functions.erase(name);
  std::vector<std::string> order;
  for (const auto& n : mod->order)
    if (!drop.count(n)) order.push_back(n);
  mod->order = std::move(order);
}

}  // namespace relax::partition
