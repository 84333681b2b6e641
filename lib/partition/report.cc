// The partition report (--partition-report) and the partitioned graph in Graphviz DOT
// (--partition-graph).
#include "relax/partition/report.h"

#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "relax/partition/plugin.h"

namespace relax::partition {

namespace {

std::string ShortOp(const std::string& op) {
  return op.rfind("relax.", 0) == 0 ? op.substr(6) : op;
}

std::string DotEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}
}  // namespace

std::string PartitionReport::Format() const {
  std::ostringstream os;
  if (plugins.empty()) {
    os << "partition: no codegen plugin is active (--byoc / --plugin)\n";
    return os.str();
  }
  for (const std::string& p : plugins) {
    size_t nregions = 0, ncomposites = 0, nrefused = 0;
    for (const auto& r : regions) nregions += r.plugin == p;
    for (const auto& t : taken) ncomposites += t.plugin == p;
    for (const auto& r : refused) nrefused += r.plugin == p;
    os << "plugin " << p << ": " << nregions << " regions, " << ncomposites << " composites, "
       << nrefused << " refused\n";
    for (const auto& r : regions) {
      if (r.plugin != p) continue;
      os << "  region " << r.region << " -> " << r.function << "\n";
      for (const auto& t : taken) {
        if (t.region != r.region) continue;
        os << "    " << t.pattern << " (@" << t.function << ")\n";
        for (const auto& op : t.ops) os << "      " << op << "\n";
      }
    }
    // Composites that did not reach run-codegen (the pipeline stopped earlier).
    for (const auto& t : taken)
      if (t.plugin == p && t.region.empty()) {
        os << "  composite " << t.pattern << " (@" << t.function << ", no region)\n";
        for (const auto& op : t.ops) os << "      " << op << "\n";
      }
    for (const auto& r : refused) {
      if (r.plugin != p) continue;
      os << "  refused %" << r.var << " = " << (r.shapes.empty() ? ShortOp(r.op) : r.shapes) << "\n"
         << "    pattern " << r.pattern << ": predicate `" << r.predicate
         << "` failed: " << r.reason << "\n";
    }
  }
  return os.str();
}

std::string PartitionGraphDot(const IRModule& mod) {
  static const char* kColours[] = {"#8dd3c7", "#fdb462", "#bebada", "#fb8072",
                                   "#80b1d3", "#b3de69", "#fccde5", "#d9d9d9"};
  std::map<std::string, std::string> colour_of;  // plugin -> colour
  std::map<std::string, std::string> plugin_of_fn;
  for (const auto& e : mod.extern_modules) plugin_of_fn[e.function] = e.plugin;
  std::ostringstream os;
  os << "digraph partitioned {\n  rankdir=TB;\n  node [fontname=\"DejaVu Sans\", fontsize=10];\n";
  const FunctionNode* main_fn = mod.GetFunction("main");
  if (!main_fn) return os.str() + "}\n";
  std::map<const VarNode*, std::string> node_of;
  int next = 0;
  for (const auto& p : main_fn->params) {
    std::string id = "n" + std::to_string(next++);
    node_of[p.get()] = id;
    os << "  " << id << " [shape=ellipse, label=\"" << DotEscape(p->name) << "\"];\n";
  }
  const SeqExprNode* seq = As<SeqExprNode>(main_fn->body);
  std::set<std::string> legend;
  int cluster = 0;
  if (seq)
    for (const auto& block : seq->blocks)
      for (const auto& b : block.bindings) {
        const CallNode* c = As<CallNode>(b.value);
        if (!c) continue;
        std::string id = "n" + std::to_string(next++);
        node_of[b.var.get()] = id;
        std::string label;
        std::string attrs = "shape=box";
        if (const OpNode* op = As<OpNode>(c->op)) {
          if (op->name == "relax.call_dps_library" && !c->args.empty()) {
            const std::string& fn = As<ExternFuncNode>(c->args[0])->symbol;
            auto it = plugin_of_fn.find(fn);
            if (it != plugin_of_fn.end()) {
              std::string& col = colour_of[it->second];
              if (col.empty()) col = kColours[(colour_of.size() - 1) % 8];
              label = it->second + ": " + fn;
              attrs = "shape=box, style=\"filled,rounded\", fillcolor=\"" + col + "\"";
              legend.insert(it->second);
            } else {
              label = "extern " + fn;
            }
          } else {
            label = ShortOp(op->name);
          }
        } else if (const GlobalVarNode* gv = As<GlobalVarNode>(c->op)) {
          const FunctionNode* f = mod.GetFunction(gv->name);
          if (f && f->attrs.count("Primitive")) {
            // A fusion group: a box (cluster) listing its ops.
            os << "  subgraph cluster_" << cluster++ << " {\n    style=dashed; label=\"@"
               << DotEscape(gv->name) << "\";\n";
            std::string ops;
            if (const SeqExprNode* fs = As<SeqExprNode>(f->body))
              for (const auto& fb : fs->blocks)
                for (const auto& x : fb.bindings)
                  if (const CallNode* xc = As<CallNode>(x.value))
                    if (const OpNode* xo = As<OpNode>(xc->op)) ops += ShortOp(xo->name) + "\\n";
            os << "    " << id << " [shape=box, label=\"" << DotEscape(ops) << "\"];\n  }\n";
            label.clear();
          } else {
            label = "@" + gv->name;
          }
        } else if (const ExternFuncNode* ef = As<ExternFuncNode>(c->op)) {
          label = "extern " + ef->symbol;
        }
        if (!label.empty())
          os << "  " << id << " [" << attrs << ", label=\"" << DotEscape(label) << "\"];\n";
        std::vector<const VarNode*> uses;
        std::function<void(const Expr&)> collect = [&](const Expr& a) {
          if (const VarNode* v = As<VarNode>(a)) uses.push_back(v);
          if (const TupleNode* t = As<TupleNode>(a))
            for (const auto& f : t->fields) collect(f);
        };
        for (const auto& a : c->args) collect(a);
        for (const VarNode* u : uses)
          if (node_of.count(u)) os << "  " << node_of.at(u) << " -> " << id << ";\n";
      }
  int legend_id = 0;  // ids are ours: a plugin's name never becomes DOT syntax
  for (const auto& p : legend)
    os << "  legend_" << legend_id++ << " [shape=note, style=filled, fillcolor=\""
       << colour_of.at(p) << "\", label=\"plugin " << DotEscape(p) << "\"];\n";
  os << "}\n";
  return os.str();
}

}  // namespace relax::partition
