// ONNX importer driver: model loading/checking, graph inputs with symbolic dims,
// initializers, node conversion through the op-family tables, outputs.
#include <onnx/checker.h>

#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>
#include <vector>

#include "debug_values.h"
#include "external_data.h"
#include "import_context.h"
#include "initializer_inputs.h"
#include "relax/op/op.h"
#include "relax/support/file.h"
#include "relax/support/utf8.h"

namespace relax::frontend {

using namespace onnx_import;

namespace onnx_import {

std::string NodeName(const onnx::NodeProto& n) {
  if (!n.name().empty()) return n.name();
  if (n.output_size() && !n.output(0).empty()) return n.output(0);
  return "<unnamed " + (n.op_type().empty() ? std::string("node") : n.op_type()) + ">";
}

std::string ConverterKey(const onnx::NodeProto& n) {
  if (n.domain().empty() || n.domain() == "ai.onnx") return n.op_type();
  return n.domain() + "." + n.op_type();
}

}  // namespace onnx_import

namespace {
const ConverterTable& Converters();
void CheckArity(const onnx_import::ImportContext& ctx, const onnx::NodeProto& n);
}  // namespace

namespace onnx_import {

void ConvertNode(ImportContext& ctx, const onnx::NodeProto& n) {
  std::string saved = ctx.bb().context();
  ctx.bb().set_context(ctx.Where(n));
  CheckArity(ctx, n);
  std::vector<Value> outs;
  try {
    auto it = Converters().find(ConverterKey(n));
    if (it == Converters().end()) RELAX_THROW("unsupported op type");
    outs = it->second(ctx, n);
  } catch (const UnsupportedOpError&) {
    throw;
  } catch (const Error& e) {
    std::string msg = e.what();
    std::string where = ctx.Where(n);
    if (msg.rfind(where, 0) != 0) msg = where + msg;
    RELAX_THROW(msg << DefaultInputNote(ctx, n));
  }
  if (!ctx.perturb_node().empty() && NodeName(n) == ctx.perturb_node() && !outs.empty()) {
    outs[0] = PerturbNodeValue(ctx, n, outs[0]);
    ctx.perturbed = true;
  }
  ctx.bb().set_context(saved);
  for (size_t i = 0; i < outs.size() && i < static_cast<size_t>(n.output_size()); ++i)
    if (!n.output(i).empty()) ctx.Set(n.output(i), outs[i]);
}

void ConvertGraphBody(ImportContext& ctx, const onnx::GraphProto& g, int64_t* converted) {
  ctx.NoteDeclaredRanks(g);
  for (const auto& t : g.initializer()) {
    if (ctx.HasDefault(t.name())) continue;  // an optional input of @main, not a constant
    Expr c = TensorProtoToConstant(t, "initializer '" + t.name() + "'");
    const ConstantNode* cn = As<ConstantNode>(c);
    ctx.Set(t.name(), Value{c, KnownInts(c), cn->shape.empty(), cn->dtype});
  }
  ConvertNodes(ctx, g, 0, converted);
}

void ConvertNodes(ImportContext& ctx, const onnx::GraphProto& g, int start, int64_t* converted) {
  for (int i = start; i < g.node_size(); ++i) {
    std::string saved = ctx.bb().context();
    try {
      ConvertNode(ctx, g.node(i));
    } catch (const IfRankSplit&) {
      ctx.bb().set_context(saved);
      ConvertIfWithTail(ctx, g, i, converted);
      return;
    }
    if (converted) ++*converted;
  }
}

std::string CleanName(const std::string& s) {
  std::string out;
  for (char ch : s) out += (std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_');
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "v" + out;
  return out;
}

bool HasControlFlow(const onnx::GraphProto& g) {
  for (const auto& n : g.node()) {
    if (n.op_type() == "If" || n.op_type() == "Loop" || n.op_type() == "Scan") return true;
    for (const auto& a : n.attribute())
      if (a.has_g() && HasControlFlow(a.g())) return true;
  }
  return false;
}

}  // namespace onnx_import

namespace {

// The newest default-domain opset whose semantics every converter implements, and the newest
// ONNX IR version this importer reads (ONNX 1.17). Opsets 18-22 changed none of the converted
// ops except to add element types; raise both together when the converters follow newer opsets.
constexpr int64_t kNewestOpset = 22;
constexpr int64_t kNewestIrVersion = 10;

const ConverterTable& Converters() {
  static const ConverterTable table = [] {
    ConverterTable t;
    AddMathConverters(&t);
    AddNNConverters(&t);
    AddTensorConverters(&t);
    AddMovementConverters(&t);
    AddLogicConverters(&t);
    AddActivationConverters(&t);
    AddLossConverters(&t);
    AddReduceConverters(&t);
    AddPoolConverters(&t);
    AddNormConverters(&t);
    AddResizeConverters(&t);
    AddRecurrentConverters(&t);
    AddSelectConverters(&t);
    AddSignalConverters(&t);
    AddTextConverters(&t);
    AddSamplingConverters(&t);
    AddLinalgConverters(&t);
    AddRearrangeConverters(&t);
    AddControlFlowConverters(&t);
    AddOptionalConverters(&t);
    AddSequenceConverters(&t);
    AddQuantizeConverters(&t);
    AddMlConverters(&t);
    AddContribTransformerConverters(&t);  // com.microsoft (onnxruntime tools)
    AddContribQuantConverters(&t);        // com.microsoft quantized ops
    return t;
  }();
  return table;
}

onnx::ModelProto LoadModel(const std::string& bytes, const std::string& path) {
  onnx::ModelProto model;
  if (bytes.empty() || !model.ParseFromString(bytes) || !model.has_graph())
    RELAX_THROW("'" << path << "' is not a valid ONNX model (protobuf parse failed or no graph)");
  return model;
}

// The tensor type of a graph input: a tensor, or an optional tensor (fed as a tensor: an
// optional graph input is always present at run time, see convert_optional.cc); else null.
const onnx::TypeProto_Tensor* InputTensorType(const onnx::ValueInfoProto& in) {
  const onnx::TypeProto& t = in.type();
  if (t.has_tensor_type()) return &t.tensor_type();
  if (t.has_optional_type() && t.optional_type().elem_type().has_tensor_type())
    return &t.optional_type().elem_type().tensor_type();
  return nullptr;
}

// The element tensor type of a sequence-typed value (a sequence of tensors, or an optional of
// one: an optional graph input is always present); else null.
const onnx::TypeProto_Tensor* SequenceElemType(const onnx::TypeProto& t) {
  const onnx::TypeProto* s = &t;
  if (s->has_optional_type()) s = &s->optional_type().elem_type();
  if (s->has_sequence_type() && s->sequence_type().elem_type().has_tensor_type())
    return &s->sequence_type().elem_type().tensor_type();
  return nullptr;
}

// Input and output counts against the op's schema (ONNX operator spec, "Inputs (min - max)"), so
// converters may read their required inputs unchecked. libonnx's schema for the newest version
// <= the model's opset; ops it does not know are left to their converter. An op that libonnx
// knows only from a later opset than the model's did not exist yet at the model's opset (ONNX
// Operators.md, "since version"): an error, since its converter assumes a later version's inputs.
void CheckArity(const ImportContext& ctx, const onnx::NodeProto& n) {
  if (!n.domain().empty() && n.domain() != "ai.onnx") return;  // other domains: the converter
  const onnx::OpSchema* schema =
      onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(ctx.opset()), "");
  if (!schema) {
    if (const onnx::OpSchema* latest = onnx::OpSchemaRegistry::Schema(n.op_type(), "")) {
      int first = latest->SinceVersion();
      for (int v = static_cast<int>(ctx.opset()) + 1; v < first; ++v)
        if (onnx::OpSchemaRegistry::Schema(n.op_type(), v, "")) {
          first = v;
          break;
        }
      RELAX_THROW(ctx.Where(n) << "op type '" << n.op_type() << "' does not exist at opset "
                               << ctx.opset() << " (it was introduced in opset " << first << ")");
    }
    return;
  }
  auto check = [&](int have, int lo, int hi, const char* what) {
    if (have < lo || have > hi) {
      std::ostringstream os;
      os << ctx.Where(n) << "has " << have << " " << what << (have == 1 ? "" : "s")
         << ", the op takes ";
      if (lo == hi)
        os << lo;
      else if (hi == std::numeric_limits<int>::max())
        os << "at least " << lo;
      else
        os << lo << " to " << hi;
      RELAX_THROW(os.str());
    }
  };
  // For opsets newer than libonnx knows, the schema is an older version: later versions add
  // optional inputs/outputs, so only the lower bounds apply.
  static const int known =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at("").second;
  const bool exact = ctx.opset() <= known;
  // Ops whose newer versions made a required input optional (OptionalHasElement-18 and
  // OptionalGetElement-18 take an optional or no input): their converters check the inputs.
  if (!exact && (n.op_type() == "OptionalHasElement" || n.op_type() == "OptionalGetElement"))
    return;
  const int unbounded = std::numeric_limits<int>::max();
  check(n.input_size(), schema->min_input(), exact ? schema->max_input() : unbounded, "input");
  check(n.output_size(), schema->min_output(), exact ? schema->max_output() : unbounded, "output");
  for (int i = 0; i < std::min(n.input_size(), schema->min_input()); ++i) {
    // A required input given as "" (the optional-input placeholder) is missing.
    const auto& formal = schema->inputs();
    size_t k = std::min<size_t>(static_cast<size_t>(i), formal.empty() ? 0 : formal.size() - 1);
    if (n.input(i).empty() && !formal.empty() &&
        formal[k].GetOption() == onnx::OpSchema::FormalParameterOption::Single)
      RELAX_THROW(ctx.Where(n) << "required input " << i << " ('" << formal[k].GetName()
                               << "') is empty");
  }
}

}  // namespace

IRModule ImportOnnx(const std::string& path, const OnnxImportOptions& options) {
  std::string bytes = ReadRegularFile(path, "model file");
  std::string dir = std::filesystem::path(path).parent_path().string();
  return ImportOnnxBytes(bytes, path, dir.empty() ? "." : dir, options);
}

IRModule ImportOnnxBytes(const std::string& bytes, const std::string& path,
                         const std::string& model_dir, const OnnxImportOptions& options) {
  OnnxImportStats local_stats;
  OnnxImportStats& stats = options.stats ? *options.stats : local_stats;
  stats = OnnxImportStats{};
  onnx::ModelProto model = LoadModel(bytes, path);
  if (model.ir_version() > kNewestIrVersion)
    RELAX_THROW("'" << path << "': ONNX IR version " << model.ir_version()
                    << " is newer than the newest this importer understands (" << kNewestIrVersion
                    << ")");
  LoadExternalData(&model, model_dir);  // before the checker, which would look for the files
  int64_t opset = -1;
  int64_t max_opset = 0;
  std::set<std::string> domains;
  for (const auto& o : model.opset_import()) {
    std::string domain = o.domain() == "ai.onnx" ? "" : o.domain();
    if (!domains.insert(domain).second)
      RELAX_THROW("'" << path << "': the model imports more than one opset for domain '"
                      << (domain.empty() ? "ai.onnx" : domain) << "'");
    if (domain.empty()) opset = o.version();
    max_opset = std::max<int64_t>(max_opset, o.version());
  }
  if (opset < 0) {
    // Only other domains imported (an ai.onnx.ml-only model): no node may use the default one.
    for (const auto& n : model.graph().node())
      if (n.domain().empty() || n.domain() == "ai.onnx")
        RELAX_THROW("'" << path << "': model imports no default-domain opset, but node '"
                        << NodeName(n) << "' (" << n.op_type() << ") is in the default domain");
    opset = kNewestOpset;
  }
  if (opset < 1 || opset > kNewestOpset)
    RELAX_THROW("'" << path << "': default-domain opset " << opset
                    << " is not supported (this importer implements opsets 1 to " << kNewestOpset
                    << ")");
  CheckModel(model, path);
  if (model.ir_version() <= 8 && max_opset <= 17) {
    // The checker wants a shape on every graph input's and output's tensor type; onnxruntime
    // runs a model whose output (a debugging output added by make_tensor_value_info(name, FLOAT,
    // None)) or initializer-backed input declares only its element type. Such a type gets an
    // empty shape for the checker's sake only, taken away again after it (an output's shape is
    // then inferred, an optional input's is its initializer's; other inputs need a shape).
    std::set<std::string> inits;
    for (const auto& t : model.graph().initializer()) inits.insert(t.name());
    std::vector<onnx::TypeProto_Tensor*> no_shape;
    for (auto* values :
         {model.mutable_graph()->mutable_output(), model.mutable_graph()->mutable_input()})
      for (auto& vi : *values)
        if (vi.type().has_tensor_type() && !vi.type().tensor_type().has_shape() &&
            (values == model.mutable_graph()->mutable_output() || inits.count(vi.name()))) {
          no_shape.push_back(vi.mutable_type()->mutable_tensor_type());
          no_shape.back()->mutable_shape();
        }
    try {
      if (UsesOrtDefaultDomainOps(model.graph())) {  // checked as com.microsoft ops
        onnx::ModelProto copy = model;
        MoveOrtDefaultDomainOps(&copy);
        onnx::checker::check_model(copy);
      } else {
        onnx::checker::check_model(model);
      }
    } catch (const std::exception& e) {
      for (auto* t : no_shape) t->clear_shape();
      RELAX_THROW("'" << path << "' failed the ONNX checker: " << e.what());
    }
    for (auto* t : no_shape) t->clear_shape();
  }
  const onnx::GraphProto& g = model.graph();
  stats.nodes = g.node_size();
  for (const auto& n : g.node()) stats.constant_nodes += n.op_type() == "Constant";

  // Every unsupported op, reported at once.
  {
    std::vector<std::pair<std::string, std::string>> missing;
    std::set<std::string> seen;
    // Subgraphs (If branches, Loop/Scan bodies) included; their nodes are named with the path
    // of enclosing nodes and attributes ("loop1/body/add3").
    std::function<void(const onnx::GraphProto&, const std::string&)> walk =
        [&](const onnx::GraphProto& graph, const std::string& prefix) {
          for (const auto& n : graph.node()) {
            std::string name = prefix + NodeName(n);
            if (!Converters().count(ConverterKey(n))) {
              std::string key = (n.domain().empty() ? "" : n.domain() + ".") +
                                (n.op_type().empty() ? "<empty op_type>" : n.op_type());
              if (seen.insert(key).second) missing.push_back({key, name});
            }
            for (const auto& a : n.attribute()) {
              if (a.has_g()) walk(a.g(), name + "/" + a.name() + "/");
              for (const auto& sub : a.graphs()) walk(sub, name + "/" + a.name() + "/");
            }
          }
        };
    walk(g, "");
    if (!missing.empty()) {
      std::ostringstream os;
      os << "'" << path << "' (opset " << opset << ") uses " << missing.size()
         << " unsupported op type" << (missing.size() > 1 ? "s" : "") << ":";
      for (const auto& [op, node] : missing)
        os << "\n  " << op << " (first at node '" << node << "')";
      throw UnsupportedOpError(os.str());
    }
  }

  IRModule mod;
  mod.attrs["source"] = path;
  mod.attrs["opset"] = std::to_string(opset);
  BlockBuilder bb(&mod);
  ImportContext ctx(&bb, opset);
  ctx.SetPerturbNode(options.perturb_node);

  std::set<std::string> init_names;
  for (const auto& t : g.initializer()) init_names.insert(t.name());

  // Graph inputs -> params with symbolic dims. A dim_value >= 0 is static; each distinct
  // dim_param is one var (distinct names stay distinct vars even when they clean to the same
  // identifier); unnamed dims get fresh `<input>_d<axis>` vars. Var names are unique: a
  // dim_param that already is an identifier keeps its name, the others get a suffix if needed.
  // Input and output names are the artifact's signature (a JSON section): they must be UTF-8.
  auto check_name = [](const onnx::ValueInfoProto& v, const char* what, int index) {
    if (!IsValidUtf8(v.name()))
      RELAX_THROW("graph " << what << " " << index << " has a name that is not valid UTF-8: '"
                           << EscapeBytes(v.name()) << "'");
  };
  for (int i = 0; i < g.input_size(); ++i) check_name(g.input(i), "input", i);
  for (int i = 0; i < g.output_size(); ++i) check_name(g.output(i), "output", i);
  // Initializers that are also graph inputs (IR version >= 4) are optional inputs with the
  // initializer as default, unless frozen into constants (initializer_inputs.h).
  std::map<std::string, const onnx::TensorProto*> with_default = InitializerInputs(model);
  stats.initializer_inputs = static_cast<int64_t>(with_default.size());
  stats.initializers_frozen = options.freeze_initializers && !with_default.empty();
  if (options.freeze_initializers) with_default.clear();
  std::deque<onnx::ValueInfoProto> default_decls;  // stable addresses for `inputs`
  std::vector<const onnx::ValueInfoProto*> inputs;
  for (const auto& in : g.input()) {
    if (auto it = with_default.find(in.name()); it != with_default.end()) {
      inputs.push_back(&default_decls.emplace_back(InitializerInputDecl(in, *it->second)));
      continue;
    }
    if (init_names.count(in.name())) continue;
    if (!InputTensorType(in) && !SequenceElemType(in.type()))
      RELAX_THROW("graph input '" << in.name() << "' is not a tensor or a sequence of tensors");
    inputs.push_back(&in);
  }
  auto is_static = [](const onnx::TensorShapeProto::Dimension& d) {
    return d.has_dim_value() && d.dim_value() >= 0;
  };
  auto param_of = [&](const onnx::TensorShapeProto::Dimension& d) -> std::string {
    if (is_static(d) || !d.has_dim_param()) return "";
    const std::string& p = d.dim_param();
    return p == "?" || p == "-1" ? "" : p;
  };
  std::set<std::string> taken;
  auto unique_name = [&](const std::string& base) {
    std::string name = base;
    for (int k = 2; taken.count(name); ++k) name = base + "_" + std::to_string(k);
    taken.insert(name);
    return name;
  };
  std::map<std::string, Var> param_vars;  // dim_param (as written in the model) -> var
  std::vector<Var> sym_vars;              // every symbolic var, in creation order
  auto new_var = [&](const std::string& name) {
    Var v = MakeVar(name);
    bb.analyzer().Bind(v, 0);
    sym_vars.push_back(v);
    return v;
  };
  static const onnx::TensorShapeProto kNoShape;  // sequence inputs declare no dims
  for (int pass = 0; pass < 2; ++pass)
    for (const auto* in : inputs)
      for (const auto& d :
           (InputTensorType(*in) ? InputTensorType(*in)->shape() : kNoShape).dim()) {
        std::string p = param_of(d);
        if (p.empty() || param_vars.count(p) || (pass == 0) != (CleanName(p) == p)) continue;
        param_vars.emplace(p, new_var(unique_name(CleanName(p))));
      }
  std::vector<VarRef> params;
  std::vector<Expr> defaults;  // FunctionNode::param_defaults
  for (const auto* in : inputs) {
    if (const auto* et = SequenceElemType(in->type())) {
      // A sequence input: a run-time VM tuple (StructInfo Object); the element dtype goes to
      // the signature, the element rank (when declared) to the importer (convert_sequence.cc).
      SeqElem e;
      e.dtype = OnnxDType(et->elem_type(), "graph input '" + in->name() + "' element");
      e.ndim = et->has_shape() ? et->shape().dim_size() : -1;
      std::string idx = std::to_string(params.size());
      mod.attrs["input_name." + idx] = in->name();
      mod.attrs["input_sequence." + idx] = ToRuntimeString(e.dtype);
      VarRef p = MakeVar(CleanName(in->name()), ObjectSInfo());
      params.push_back(p);
      Value v;
      v.expr = p;
      v.seq = e;
      ctx.Set(in->name(), v);
      continue;
    }
    const auto& tt = *InputTensorType(*in);
    DataType dt = OnnxDType(tt.elem_type(), "graph input '" + in->name() + "'");
    if (!tt.has_shape())  // (at IR version > 8 the ONNX checker, which requires one, is skipped)
      RELAX_THROW("graph input '" << in->name()
                                  << "' declares no shape; its rank is needed (declare its dims, "
                                     "naming the symbolic ones)");
    if (tt.shape().dim_size() > kMaxRank)
      RELAX_THROW("graph input '" << in->name() << "' has rank " << tt.shape().dim_size()
                                  << "; ranks above " << kMaxRank << " are not supported");
    std::vector<PrimExpr> dims;
    std::vector<int64_t> static_dims;
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
      const auto& d = tt.shape().dim(i);
      if (is_static(d)) {
        // No tensor has 2^48 elements along one axis; refusing such dims keeps the shape
        // arithmetic of every converter (d + k, d * s) far from int64 overflow.
        if (d.dim_value() > kMaxDim)
          RELAX_THROW("graph input '" << in->name() << "' dim " << i << " is " << d.dim_value()
                                      << "; dims above 2^48 are not supported");
        dims.push_back(IntImm(d.dim_value()));
        static_dims.push_back(d.dim_value());
        continue;
      }
      std::string p = param_of(d);
      dims.push_back(p.empty()
                         ? new_var(unique_name(CleanName(in->name()) + "_d" + std::to_string(i)))
                         : param_vars.at(p));
    }
    if (!CheckedByteSize(static_dims, dt.bytes()))
      RELAX_THROW("graph input '" << in->name() << "': declared shape " << DimsText(static_dims)
                                  << " of " << ToString(dt) << " has more than 2^63-1 bytes");
    mod.attrs["input_name." + std::to_string(params.size())] = in->name();
    VarRef p = MakeVar(CleanName(in->name()), TensorSInfo(dims, dt));
    params.push_back(p);
    ctx.Set(in->name(), Value{p, std::nullopt, false});
    if (auto it = with_default.find(in->name()); it != with_default.end()) {
      defaults.resize(params.size());
      defaults.back() = InitializerDefault(p, in->name(), *it->second);
    }
  }
  if (!defaults.empty()) defaults.resize(params.size());
  NoteInputsWithDefault(ctx, defaults, with_default, &stats, options.warnings);
  // --bound NAME: the dim_param as written in the model, or the var's (printed) name.
  std::map<std::string, std::pair<int64_t, int64_t>> var_bounds;  // by var name
  for (const auto& [name, b] : options.bounds) {
    Var v;
    if (auto it = param_vars.find(name); it != param_vars.end()) v = it->second;
    for (const Var& s : sym_vars)
      if (!v.defined() && VarName(s) == name) v = s;
    if (!v.defined())
      RELAX_THROW("--bound names '" << name << "', which is not a symbolic dim of the model");
    if (!var_bounds.emplace(VarName(v), b).second)
      RELAX_THROW("--bound: dim '" << name << "' is bounded twice");
  }
  for (const Var& v : sym_vars)
    if (auto b = var_bounds.find(VarName(v)); b != var_bounds.end())
      bb.analyzer().Bind(v, b->second.first, b->second.second);

  // A graph with control flow is imported into one binding block: its If bindings and loop
  // calls sit between ops whose results cross them (dataflow blocks hold only pure op calls).
  const bool control_flow = HasControlFlow(g);
  if (control_flow)
    bb.BeginBindingBlock();
  else
    bb.BeginDataflowBlock();
  stats.reached_conversion = true;
  ConvertGraphBody(ctx, g, &stats.nodes_converted);

  // Outputs: check declared dims, then bind as dataflow outputs.
  std::vector<Expr> results;
  std::vector<StructInfo> result_sinfo;
  int oi = 0;
  for (const auto& out : g.output()) {
    if (!ctx.Has(out.name()))
      RELAX_THROW("graph output '" << out.name()
                                   << "' is not produced by any node, input or initializer");
    const Value& ov = ctx.Get(out.name());
    if (ov.seq) {
      const auto* et = SequenceElemType(out.type());
      if (!et && out.type().value_case() != onnx::TypeProto::VALUE_NOT_SET)
        RELAX_THROW("graph output '"
                    << out.name() << "' is a sequence but not declared as a sequence of tensors");
      if (et && et->elem_type() != onnx::TensorProto::UNDEFINED &&
          OnnxDType(et->elem_type(), "graph output '" + out.name() + "'") != ov.seq->dtype)
        RELAX_THROW("graph output '" << out.name() << "' is declared as a sequence of "
                                     << ToString(OnnxDType(et->elem_type(), out.name()))
                                     << " but the graph computes a sequence of "
                                     << ToString(ov.seq->dtype));
      VarRef gv = bb.Emit(ov.expr, "out" + std::to_string(oi), /*is_output=*/true);
      mod.attrs["output_sequence." + std::to_string(oi)] = ToRuntimeString(ov.seq->dtype);
      mod.attrs["output_name." + std::to_string(oi++)] = out.name();
      results.push_back(gv);
      result_sinfo.push_back(gv->sinfo);
      continue;
    }
    if (!out.type().has_tensor_type())
      RELAX_THROW("graph output '" << out.name() << "' is not declared as a tensor");
    int elem_type = out.type().tensor_type().elem_type();
    if (elem_type == onnx::TensorProto::UNDEFINED)
      RELAX_THROW("graph output '" << out.name() << "' has an undefined element type");
    DataType declared = OnnxDType(elem_type, "graph output '" + out.name() + "'");
    const Value& v = ctx.Get(out.name());
    Expr e = v.expr;
    if (!e) {
      onnx::NodeProto fake;
      fake.set_op_type("output");
      fake.add_input(out.name());
      e = ctx.Tensor(fake, 0);
    }
    StructInfo s = e->sinfo;
    if (s->kind == SIKind::kTensor && s->dtype != declared)
      RELAX_THROW("graph output '" << out.name() << "' is declared as " << ToString(declared)
                                   << " but the graph computes " << ToString(s->dtype));
    if (out.type().has_tensor_type() && out.type().tensor_type().has_shape() && s->values) {
      const auto& shp = out.type().tensor_type().shape();
      // A declared rank the graph does not compute: the computed shape wins (onnxruntime runs
      // such models), with a warning; declared dims are then not compared.
      const bool rank_differs = shp.dim_size() != static_cast<int>(s->values->size());
      if (rank_differs && options.warnings)
        options.warnings->push_back("graph output '" + out.name() + "' is declared with rank " +
                                    std::to_string(shp.dim_size()) + " but the graph computes " +
                                    ToString(s) + "; the computed shape is used");
      bb.set_context("graph output '" + out.name() + "': ");
      for (int i = 0; i < shp.dim_size() && !rank_differs; ++i) {
        const auto& d = shp.dim(i);
        int64_t computed = 0;
        if (is_static(d) && (*s->values)[i].AsInt(&computed) && computed != d.dim_value()) {
          // A static dim the graph computes otherwise (onnx's inference declares NonZero of a
          // scalar (0, n); onnxruntime runs it and warns): the computed dim is used.
          if (options.warnings)
            options.warnings->push_back("graph output '" + out.name() + "' is declared with dim " +
                                        std::to_string(i) + " = " + std::to_string(d.dim_value()) +
                                        " but the graph computes " + std::to_string(computed) +
                                        "; the computed dim is used");
        } else if (is_static(d)) {
          bb.UnifyDim((*s->values)[i], IntImm(d.dim_value()), "declared dim " + std::to_string(i));
        } else if (!param_of(d).empty()) {
          auto it = param_vars.find(param_of(d));
          if (it != param_vars.end())
            bb.UnifyDim((*s->values)[i], it->second, "declared dim " + std::to_string(i));
        }
      }
    }
    VarRef gv = bb.Emit(e, "out" + std::to_string(oi), /*is_output=*/true);
    mod.attrs["output_name." + std::to_string(oi++)] = out.name();
    results.push_back(gv);
    result_sinfo.push_back(gv->sinfo);
  }
  if (results.empty()) RELAX_THROW("'" << path << "': the graph has no outputs");
  if (!options.perturb_node.empty() && !ctx.perturbed)
    RELAX_THROW("debug.perturb-node: the model has no node named '" << options.perturb_node << "'");
  if (ctx.perturbed && options.warnings)
    options.warnings->push_back("debug.perturb-node: the value of node '" + options.perturb_node +
                                "' is changed on purpose (a test hook); this artifact computes "
                                "wrong results");
  if (options.keep_node_values) {
    std::set<std::string> graph_outputs;
    for (const auto& out : g.output()) graph_outputs.insert(out.name());
    EmitNodeValueOutputs(ctx, g, graph_outputs, &mod, &results, &oi);
  }
  // libonnx's shape inference is not run: the import above computes every dim itself and
  // unifies the declared graph-output dims with them (authoritative), while libonnx 1.12's rules
  // lag the spec (e.g. MaxPool with ceil_mode drops a last window that starts in the padding
  // since onnx 1.16, which 1.12 rejects).

  auto seq = std::make_shared<SeqExprNode>();
  seq->blocks.push_back(bb.EndBlock());
  Expr body = results.size() == 1 ? results[0] : bb.Normalize(MakeTuple(results));
  seq->body = body;
  seq->sinfo = body->sinfo;
  auto fn = std::make_shared<FunctionNode>();
  fn->params = params;
  fn->param_defaults = defaults;
  fn->body = seq;
  fn->ret_sinfo = body->sinfo;
  fn->attrs["global_symbol"] = std::string("main");
  for (const auto& [name, b] : var_bounds)
    fn->attrs["bound." + name] = std::vector<int64_t>{b.first, b.second};
  std::vector<StructInfo> ps;
  for (const auto& p : params) ps.push_back(p->sinfo);
  fn->sinfo = FuncSInfo(ps, fn->ret_sinfo);
  mod.AddFunction("main", fn);
  return mod;
}

}  // namespace relax::frontend
