// The importer's own structural and attribute checks of an ONNX model, run at every opset it
// accepts. Debian's libonnx 1.12 checker knows opsets up to 17 only and is skipped past them (and
// past IR version 8), so these checks are what refuses an invalid newer model: values defined
// twice (SSA, across subgraph scopes as the ONNX IR spec requires), graph inputs or initializers
// given twice, attributes given twice, attributes the operator version does not define or of
// the wrong type, required attributes missing. The attribute table is generated from the pinned
// onnx wheel's schemas (scripts/gen_onnx_attr_table.py -> onnx_attr_table.inc).
#include <map>
#include <set>
#include <string>
#include <vector>

#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

struct AttrSpec {
  const char* name;
  int type;  // onnx::AttributeProto::AttributeType
  bool required;
};
struct OpSpec {
  const char* domain;
  const char* op;
  int since;
  std::vector<AttrSpec> attrs;
};

const std::vector<OpSpec>& Table() {
  static const std::vector<OpSpec> table = {
#include "onnx_attr_table.inc"
  };
  return table;
}

// (domain, op) -> its versions in ascending `since` order.
const std::map<std::pair<std::string, std::string>, std::vector<const OpSpec*>>& Index() {
  static const auto index = [] {
    std::map<std::pair<std::string, std::string>, std::vector<const OpSpec*>> m;
    for (const OpSpec& s : Table()) m[{s.domain, s.op}].push_back(&s);
    return m;
  }();
  return index;
}

std::string Domain(const std::string& d) { return d == "ai.onnx" ? "" : d; }

const char* TypeName(int t) {
  static const char* kNames[] = {"UNDEFINED",      "FLOAT",      "INT",        "STRING",
                                 "TENSOR",         "GRAPH",      "FLOATS",     "INTS",
                                 "STRINGS",        "TENSORS",    "GRAPHS",     "SPARSE_TENSOR",
                                 "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS"};
  return t >= 0 && t < 15 ? kNames[t] : "?";
}

// Subgraphs nest at most this deep (protobuf's own parse limit is lower; this bounds the
// recursion whatever the parser allows).
constexpr int kMaxGraphNesting = 64;

class ModelChecker {
 public:
  ModelChecker(const std::map<std::string, int64_t>& opsets, const std::string& path)
      : opsets_(opsets), path_(path) {}

  void CheckGraph(const onnx::GraphProto& g, const std::string& where, int depth) {
    if (depth > kMaxGraphNesting)
      Fail(where + "subgraphs nest deeper than " + std::to_string(kMaxGraphNesting) + " levels");
    scopes_.emplace_back();
    auto& scope = scopes_.back();
    std::set<std::string> inputs;
    for (const auto& in : g.input()) {
      if (!inputs.insert(in.name()).second)
        Fail(where + "graph input '" + in.name() + "' is declared more than once");
      scope.emplace(in.name(), "a graph input");
    }
    std::set<std::string> inits;
    for (const auto& t : g.initializer()) {
      if (!inits.insert(t.name()).second)
        Fail(where + "initializer '" + t.name() + "' is given more than once");
      // An initializer named like a graph input is that input's default (IR version >= 4).
      scope.emplace(t.name(), "an initializer");
    }
    for (const auto& t : g.sparse_initializer()) {
      const std::string& name = t.values().name();
      if (!inits.insert(name).second)
        Fail(where + "initializer '" + name + "' is given more than once");
      scope.emplace(name, "an initializer");
    }
    for (const auto& n : g.node()) {
      const std::string node = where + n.op_type() + " '" + NodeName(n) + "'";
      CheckAttributes(n, node);
      for (const auto& a : n.attribute()) {
        if (a.has_g()) CheckGraph(a.g(), node + "/" + a.name() + ": ", depth + 1);
        for (const auto& sub : a.graphs()) CheckGraph(sub, node + "/" + a.name() + ": ", depth + 1);
      }
      for (int i = 0; i < n.output_size(); ++i) {
        const std::string& o = n.output(i);
        if (o.empty()) continue;
        if (const std::string* first = Defined(o))
          Fail(node + ": output " + std::to_string(i) + " '" + o + "' is already defined (by " +
               *first + "); ONNX graphs are in single static assignment form");
        scopes_.back().emplace(o, "output " + std::to_string(i) + " of node '" + NodeName(n) + "'");
      }
    }
    scopes_.pop_back();
  }

 private:
  [[noreturn]] void Fail(const std::string& msg) const {
    RELAX_THROW("'" << path_ << "' is not a valid ONNX model: " << msg);
  }

  const std::string* Defined(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end()) return &f->second;
    }
    return nullptr;
  }

  void CheckAttributes(const onnx::NodeProto& n, const std::string& node) const {
    std::set<std::string> seen;
    for (const auto& a : n.attribute())
      if (!seen.insert(a.name()).second)
        Fail(node + ": attribute '" + a.name() + "' is given more than once");
    const std::string domain = Domain(n.domain());
    auto ov = opsets_.find(domain);
    if (ov == opsets_.end()) return;  // an undeclared domain: the importer names it
    auto it = Index().find({domain, n.op_type()});
    if (it == Index().end()) return;  // not in the table (other domains): converters judge
    const OpSpec* spec = nullptr;
    for (const OpSpec* s : it->second)
      if (s->since <= ov->second) spec = s;
    if (!spec) return;  // newer than the model's opset: the importer reports it as unsupported
    const std::string at = node + " (opset " + std::to_string(ov->second) + ")";
    for (const auto& a : n.attribute()) {
      if (!a.ref_attr_name().empty()) continue;  // a function body's reference
      const AttrSpec* as = nullptr;
      for (const AttrSpec& x : spec->attrs)
        if (a.name() == x.name) as = &x;
      if (!as)
        Fail(at + ": unknown attribute '" + a.name() + "' (" + n.op_type() + "-" +
             std::to_string(spec->since) + " defines " + Names(*spec) + ")");
      if (a.type() != onnx::AttributeProto::UNDEFINED && a.type() != as->type)
        Fail(at + ": attribute '" + a.name() + "' must be " + TypeName(as->type) + ", got " +
             TypeName(a.type()));
    }
    for (const AttrSpec& x : spec->attrs)
      if (x.required && !seen.count(x.name))
        Fail(at + ": required attribute '" + std::string(x.name) + "' is missing");
  }

  static std::string Names(const OpSpec& s) {
    if (s.attrs.empty()) return "no attributes";
    std::string out;
    for (size_t i = 0; i < s.attrs.size(); ++i)
      out += (i ? ", " : "") + std::string(s.attrs[i].name);
    return out;
  }

  const std::map<std::string, int64_t>& opsets_;
  std::string path_;
  std::vector<std::map<std::string, std::string>> scopes_;  // name -> what defined it
};

}  // namespace

void CheckModel(const onnx::ModelProto& model, const std::string& path) {
  std::map<std::string, int64_t> opsets;
  for (const auto& o : model.opset_import()) opsets[Domain(o.domain())] = o.version();
  ModelChecker(opsets, path).CheckGraph(model.graph(), "", 0);
}

}  // namespace relax::frontend::onnx_import
