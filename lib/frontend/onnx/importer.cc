// ONNX importer driver: model loading/checking, graph inputs with symbolic dims,
// initializers, node conversion through the op-family tables, outputs.
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "import_context.h"
#include "relax/op/op.h"
#include "relax/support/file.h"

namespace relax::frontend {

using namespace onnx_import;

namespace onnx_import {

std::string ImportContext::Where(const onnx::NodeProto& node) const {
  std::ostringstream os;
  os << node.op_type() << " '" << (node.name().empty() ? node.output(0) : node.name()) << "': ";
  return os.str();
}

const Value& ImportContext::Get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) RELAX_THROW("value '" << name << "' is used before it is defined");
  return it->second;
}

Expr ImportContext::Tensor(const onnx::NodeProto& node, int i) {
  if (!HasInput(node, i)) RELAX_THROW(Where(node) << "missing input " << i);
  const Value& v = Get(node.input(i));
  if (v.expr) return v.expr;
  // Known integer values only: a constant when all are constants.
  std::vector<int64_t> data;
  const DataType dt = v.dtype.is_int() || v.dtype.is_uint() ? v.dtype : DataType::Int(64);
  bool symbolic = false;
  for (const auto& e : *v.ints) {
    int64_t c = 0;
    symbolic |= !e.AsInt(&c);
    data.push_back(c);
  }
  if (symbolic) {
    // Values over symbolic dims: computed at run time from a zero-element view whose dims are
    // the symbolic values (a negative one is a run-time shape error).
    std::vector<PrimExpr> carrier;
    std::vector<int64_t> values, is_sym;
    for (const auto& e : *v.ints) {
      int64_t c = 0;
      bool s = !e.AsInt(&c);
      if (s) {
        c = static_cast<int64_t>(carrier.size());
        carrier.push_back(e);
      }
      values.push_back(c);
      is_sym.push_back(s);
    }
    carrier.push_back(0);
    Expr view =
        bb_->Emit(MakeCall(GetOp("relax.reshape"),
                           {MakeConstant(DataType::Int(64), {0}, {}), MakeShapeExpr(carrier)}),
                  "dims_view");
    return bb_->Emit(MakeCall(GetOp("relax.tensor_of_dims"), {view},
                              {{"dtype", ToRuntimeString(dt)},
                               {"scalar", int64_t{v.scalar}},
                               {"values", values},
                               {"symbolic", is_sym}}),
                     "dims");
  }
  // Each value's low bytes in the value's dtype (little-endian host, as the runtime assumes).
  const size_t item = static_cast<size_t>(dt.bytes());
  std::vector<uint8_t> bytes(data.size() * item);
  for (size_t k = 0; k < data.size(); ++k) std::memcpy(bytes.data() + k * item, &data[k], item);
  std::vector<int64_t> shape;
  if (!v.scalar) shape.push_back(static_cast<int64_t>(data.size()));
  return MakeConstant(dt, shape, std::move(bytes));
}

std::vector<int64_t> ImportContext::ConstInts(const onnx::NodeProto& node, int i) {
  if (!HasInput(node, i)) RELAX_THROW(Where(node) << "missing input " << i);
  const Value& v = Get(node.input(i));
  if (!v.ints) RELAX_THROW(Where(node) << "input '" << node.input(i) << "' must be a constant");
  std::vector<int64_t> out;
  for (const auto& e : *v.ints) {
    int64_t c;
    if (!e.AsInt(&c)) RELAX_THROW(Where(node) << "input '" << node.input(i) << "' must be static");
    out.push_back(c);
  }
  return out;
}

double ImportContext::ConstFloat(const onnx::NodeProto& node, int i) {
  const Value& v = Get(node.input(i));
  const ConstantNode* c = As<ConstantNode>(v.expr);
  if (!c || c->numel() != 1)
    RELAX_THROW(Where(node) << "input '" << node.input(i) << "' must be a constant scalar");
  const uint8_t* p = c->data->data();
  if (c->dtype == DataType::Float(32)) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  if (c->dtype == DataType::Float(64)) {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  if (v.ints) {
    int64_t x = 0;
    (*v.ints)[0].AsInt(&x);
    return static_cast<double>(x);
  }
  RELAX_THROW(Where(node) << "input '" << node.input(i) << "' has unsupported dtype");
}

Value ImportContext::Emit(const Expr& call, const onnx::NodeProto& node, int out) {
  std::string name = out < node.output_size() ? node.output(out) : node.name();
  std::string clean;
  for (char ch : name) clean += (std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_');
  if (clean.empty() || std::isdigit(static_cast<unsigned char>(clean[0]))) clean = "v" + clean;
  VarRef v = bb_->Emit(call, clean);
  // A tensor whose static size overflows int64 bytes cannot exist (allocation sizes are int64).
  const StructInfo& s = v->sinfo;
  if (s->kind == SIKind::kTensor && s->values) {
    std::vector<int64_t> dims;
    for (const PrimExpr& d : *s->values) {
      int64_t c;
      if (d.AsInt(&c)) dims.push_back(c);
    }
    if (!CheckedByteSize(dims, s->dtype.bytes()))
      RELAX_THROW(Where(node) << "output '" << name << "' of shape " << ToString(s)
                              << " has more than 2^63-1 bytes");
  }
  return Value{v, std::nullopt, false};
}

const onnx::AttributeProto* FindAttr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
int64_t AttrInt(const onnx::NodeProto& n, const std::string& name, int64_t def) {
  const auto* a = FindAttr(n, name);
  return a ? a->i() : def;
}
float AttrFloat(const onnx::NodeProto& n, const std::string& name, float def) {
  const auto* a = FindAttr(n, name);
  return a ? a->f() : def;
}
std::vector<int64_t> AttrInts(const onnx::NodeProto& n, const std::string& name,
                              std::vector<int64_t> def) {
  const auto* a = FindAttr(n, name);
  if (!a) return def;
  return {a->ints().begin(), a->ints().end()};
}
std::string AttrString(const onnx::NodeProto& n, const std::string& name, const std::string& def) {
  const auto* a = FindAttr(n, name);
  return a ? a->s() : def;
}

DataType OnnxDType(int elem_type, const std::string& what) {
  switch (elem_type) {
    case onnx::TensorProto::FLOAT:
      return DataType::Float(32);
    case onnx::TensorProto::DOUBLE:
      return DataType::Float(64);
    case onnx::TensorProto::FLOAT16:
      return DataType::Float(16);
    case onnx::TensorProto::INT8:
      return DataType::Int(8);
    case onnx::TensorProto::INT16:
      return DataType::Int(16);
    case onnx::TensorProto::INT32:
      return DataType::Int(32);
    case onnx::TensorProto::INT64:
      return DataType::Int(64);
    case onnx::TensorProto::UINT8:
      return DataType::UInt(8);
    case onnx::TensorProto::UINT16:
      return DataType::UInt(16);
    case onnx::TensorProto::UINT32:
      return DataType::UInt(32);
    case onnx::TensorProto::UINT64:
      return DataType::UInt(64);
    case onnx::TensorProto::BOOL:
      return DataType::Bool();
    default:
      RELAX_THROW(what << ": unsupported ONNX element type " << elem_type);
  }
}

namespace {
std::string DimsText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}
}  // namespace

std::optional<int64_t> CheckedByteSize(const std::vector<int64_t>& dims, int64_t item_bytes) {
  int64_t n = item_bytes;
  for (int64_t d : dims)
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  return n;
}

Expr TensorProtoToConstant(const onnx::TensorProto& t, const std::string& what) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    RELAX_THROW(what << ": tensors with external data are not supported yet");
  DataType dt = OnnxDType(t.data_type(), what);
  std::vector<int64_t> shape(t.dims().begin(), t.dims().end());
  for (int64_t d : shape)
    if (d < 0) RELAX_THROW(what << ": negative dim " << d);
  // Sizes are checked (overflow, then against the data present) before anything is allocated.
  std::optional<int64_t> checked = CheckedByteSize(shape, dt.bytes());
  if (!checked)
    RELAX_THROW(what << ": declared shape " << DimsText(shape) << " of " << ToString(dt)
                     << " has more than 2^63-1 bytes");
  const int64_t item = dt.bytes();
  const int64_t nbytes = *checked;
  const int64_t numel = nbytes / item;
  std::vector<uint8_t> data;
  auto fill = [&](const auto& field, auto conv) {
    if (static_cast<int64_t>(field.size()) != numel)
      RELAX_THROW(what << ": declared shape " << DimsText(shape) << " has " << numel
                       << " elements, but the tensor holds " << field.size() << " values");
    data.resize(static_cast<size_t>(nbytes));
    for (int64_t i = 0; i < numel; ++i) {
      auto v = conv(field.Get(static_cast<int>(i)));
      std::memcpy(data.data() + i * item, &v, item);
    }
  };
  if (t.has_raw_data()) {
    if (static_cast<int64_t>(t.raw_data().size()) != nbytes)
      RELAX_THROW(what << ": raw data has " << t.raw_data().size() << " bytes, but declared shape "
                       << DimsText(shape) << " of " << ToString(dt) << " needs " << nbytes);
    data.assign(t.raw_data().begin(), t.raw_data().end());
  } else if (dt == DataType::Float(32)) {
    fill(t.float_data(), [](float v) { return v; });
  } else if (dt == DataType::Float(64)) {
    fill(t.double_data(), [](double v) { return v; });
  } else if (dt == DataType::Int(64)) {
    fill(t.int64_data(), [](int64_t v) { return v; });
  } else if (dt == DataType::Int(32)) {
    fill(t.int32_data(), [](int32_t v) { return v; });
  } else if (dt == DataType::Int(8) || dt == DataType::UInt(8) || dt == DataType::Bool()) {
    fill(t.int32_data(), [](int32_t v) { return static_cast<uint8_t>(v); });
  } else if (dt == DataType::Int(16) || dt == DataType::UInt(16)) {
    fill(t.int32_data(), [](int32_t v) { return static_cast<uint16_t>(v); });
  } else if (dt == DataType::UInt(32)) {
    fill(t.uint64_data(), [](uint64_t v) { return static_cast<uint32_t>(v); });
  } else if (dt == DataType::UInt(64)) {
    fill(t.uint64_data(), [](uint64_t v) { return v; });
  } else if (numel > 0) {
    RELAX_THROW(what << ": unsupported data encoding for " << ToString(dt));
  }
  return MakeConstant(dt, shape, std::move(data), t.name());
}

std::optional<std::vector<PrimExpr>> KnownInts(const Expr& e) {
  const ConstantNode* c = As<ConstantNode>(e);
  if (!c || !(c->dtype.is_int() || c->dtype.is_uint()) || c->shape.size() > 1 || c->numel() > 64)
    return std::nullopt;
  std::vector<PrimExpr> out;
  for (int64_t i = 0; i < c->numel(); ++i) {
    int64_t v = 0;
    const uint8_t* p = c->data->data() + i * c->dtype.bytes();
    switch (c->dtype.bits) {
      case 64:
        std::memcpy(&v, p, 8);
        break;
      case 32: {
        int32_t x;
        std::memcpy(&x, p, 4);
        v = x;
        break;
      }
      case 16: {
        int16_t x;
        std::memcpy(&x, p, 2);
        v = x;
        break;
      }
      default:
        v = c->dtype.is_uint() ? p[0] : static_cast<int8_t>(p[0]);
    }
    out.push_back(IntImm(v));
  }
  return out;
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
    return t;
  }();
  return table;
}

onnx::ModelProto LoadModel(const std::string& path) {
  std::string bytes = ReadRegularFile(path, "model file");
  onnx::ModelProto model;
  if (bytes.empty() || !model.ParseFromString(bytes) || !model.has_graph())
    RELAX_THROW("'" << path << "' is not a valid ONNX model (protobuf parse failed or no graph)");
  return model;
}

std::string CleanName(const std::string& s) {
  std::string out;
  for (char ch : s) out += (std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_');
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "v" + out;
  return out;
}

}  // namespace

IRModule ImportOnnx(const std::string& path, const OnnxImportOptions& options) {
  onnx::ModelProto model = LoadModel(path);
  if (model.ir_version() > kNewestIrVersion)
    RELAX_THROW("'" << path << "': ONNX IR version " << model.ir_version()
                    << " is newer than the newest this importer understands (" << kNewestIrVersion
                    << ")");
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
  if (opset < 0) RELAX_THROW("'" << path << "': model imports no default-domain opset");
  if (opset < 1 || opset > kNewestOpset)
    RELAX_THROW("'" << path << "': default-domain opset " << opset
                    << " is not supported (this importer implements opsets 1 to " << kNewestOpset
                    << ")");
  if (model.ir_version() <= 8 && max_opset <= 17) {
    try {
      onnx::checker::check_model(model);
    } catch (const std::exception& e) {
      RELAX_THROW("'" << path << "' failed the ONNX checker: " << e.what());
    }
  }
  const onnx::GraphProto& g = model.graph();

  // Every unsupported op, reported at once.
  {
    std::vector<std::pair<std::string, std::string>> missing;
    std::set<std::string> seen;
    for (const auto& n : g.node()) {
      if ((!n.domain().empty() && n.domain() != "ai.onnx") || !Converters().count(n.op_type())) {
        std::string key = (n.domain().empty() ? "" : n.domain() + ".") + n.op_type();
        if (seen.insert(key).second)
          missing.push_back({key, n.name().empty() ? n.output(0) : n.name()});
      }
    }
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

  std::set<std::string> init_names;
  for (const auto& t : g.initializer()) {
    init_names.insert(t.name());
    Expr c = TensorProtoToConstant(t, "initializer '" + t.name() + "'");
    const ConstantNode* cn = As<ConstantNode>(c);
    ctx.Set(t.name(), Value{c, KnownInts(c), cn->shape.empty(), cn->dtype});
  }

  // Graph inputs -> params with symbolic dims. A dim_value >= 0 is static; each distinct
  // dim_param is one var (distinct names stay distinct vars even when they clean to the same
  // identifier); unnamed dims get fresh `<input>_d<axis>` vars. Var names are unique: a
  // dim_param that already is an identifier keeps its name, the others get a suffix if needed.
  std::vector<const onnx::ValueInfoProto*> inputs;
  for (const auto& in : g.input()) {
    if (init_names.count(in.name())) continue;
    if (!in.type().has_tensor_type())
      RELAX_THROW("graph input '" << in.name() << "' is not a tensor");
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
  for (int pass = 0; pass < 2; ++pass)
    for (const auto* in : inputs)
      for (const auto& d : in->type().tensor_type().shape().dim()) {
        std::string p = param_of(d);
        if (p.empty() || param_vars.count(p) || (pass == 0) != (CleanName(p) == p)) continue;
        param_vars.emplace(p, new_var(unique_name(CleanName(p))));
      }
  std::vector<VarRef> params;
  for (const auto* in : inputs) {
    const auto& tt = in->type().tensor_type();
    DataType dt = OnnxDType(tt.elem_type(), "graph input '" + in->name() + "'");
    std::vector<PrimExpr> dims;
    std::vector<int64_t> static_dims;
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
      const auto& d = tt.shape().dim(i);
      if (is_static(d)) {
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
  }
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

  bb.BeginDataflowBlock();
  for (const auto& n : g.node()) {
    bb.set_context(ctx.Where(n));
    std::vector<Value> outs;
    try {
      outs = Converters().at(n.op_type())(ctx, n);
    } catch (const UnsupportedOpError&) {
      throw;
    } catch (const Error& e) {
      std::string msg = e.what();
      std::string where = ctx.Where(n);
      if (msg.rfind(where, 0) != 0) msg = where + msg;
      RELAX_THROW(msg);
    }
    for (size_t i = 0; i < outs.size() && i < static_cast<size_t>(n.output_size()); ++i)
      if (!n.output(i).empty()) ctx.Set(n.output(i), outs[i]);
  }

  // Outputs: check declared dims, then bind as dataflow outputs.
  std::vector<Expr> results;
  std::vector<StructInfo> result_sinfo;
  int oi = 0;
  for (const auto& out : g.output()) {
    if (!ctx.Has(out.name()))
      RELAX_THROW("graph output '" << out.name()
                                   << "' is not produced by any node, input or initializer");
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
      if (shp.dim_size() != static_cast<int>(s->values->size()))
        RELAX_THROW("graph output '" << out.name() << "' is declared with rank " << shp.dim_size()
                                     << " but has rank " << s->values->size());
      bb.set_context("graph output '" + out.name() + "': ");
      for (int i = 0; i < shp.dim_size(); ++i) {
        const auto& d = shp.dim(i);
        if (is_static(d)) {
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
  if (model.ir_version() <= 8 && max_opset <= 17) {
    // ONNX's own shape inference, as a consistency check only, and only after our import
    // validated the attributes (libonnx's inference can trap on e.g. zero strides).
    try {
      onnx::ModelProto copy = model;
      onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(),
                                         onnx::ShapeInferenceOptions(true, 0, false));
    } catch (const std::exception& e) {
      RELAX_THROW("'" << path << "' failed ONNX shape inference: " << e.what());
    }
  }

  auto seq = std::make_shared<SeqExprNode>();
  seq->blocks.push_back(bb.EndBlock());
  Expr body = results.size() == 1 ? results[0] : bb.Normalize(MakeTuple(results));
  seq->body = body;
  seq->sinfo = body->sinfo;
  auto fn = std::make_shared<FunctionNode>();
  fn->params = params;
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
