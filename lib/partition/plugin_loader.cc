// LoadPluginLibrary: out-of-tree plugins through the C ABI (plugin_c_api.h), wrapped in the
// CodegenPlugin interface.
#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <sstream>

#include "relax/partition/pattern.h"
#include "relax/partition/plugin.h"
#include "relax/partition/plugin_c_api.h"
#include "relax/support/error.h"

namespace relax::partition {

namespace {

// The C view of a Region, with storage for every pointer it hands out.
struct CRegion {
  RelaxPluginRegion region{};
  std::string target;
  std::vector<RelaxPluginValue> values;
  std::vector<std::vector<int64_t>> dims;
  std::vector<std::vector<std::string>> dim_strs;
  std::vector<std::vector<const char*>> dim_ptrs;
  std::vector<std::string> dtypes;
  std::vector<RelaxPluginOp> ops;
  std::vector<std::vector<int32_t>> op_inputs;
  std::vector<std::vector<RelaxPluginAttr>> op_attrs;
  std::vector<int32_t> params, outputs;

  CRegion(const Region& r, const Target& t) {
    target = t.ToString();
    size_t n = r.values.size();
    values.resize(n);
    dims.resize(n);
    dim_strs.resize(n);
    dim_ptrs.resize(n);
    dtypes.resize(n);
    for (size_t k = 0; k < n; ++k) {
      const RegionValue& v = r.values[k];
      RelaxPluginValue& c = values[k];
      c.name = v.name.c_str();
      c.param_index = v.param_index;
      if (v.sinfo && v.sinfo->kind == SIKind::kTensor) {
        dtypes[k] = ToRuntimeString(v.sinfo->dtype);
        c.ndim = v.sinfo->ndim;
        if (v.sinfo->values)
          for (const PrimExpr& d : *v.sinfo->values) {
            int64_t x;
            dims[k].push_back(d.AsInt(&x) ? x : -1);
            dim_strs[k].push_back(ToString(d));
          }
      } else {
        dtypes[k] = "object";
        c.ndim = -1;
      }
      for (const auto& s : dim_strs[k]) dim_ptrs[k].push_back(s.c_str());
      c.dtype = dtypes[k].c_str();
      if (dims[k].size() != static_cast<size_t>(std::max(c.ndim, 0))) c.ndim = -1;
      c.dims = dims[k].data();
      c.dim_exprs = dim_ptrs[k].data();
      if (v.constant && v.constant->data) {
        c.constant_data = v.constant->data->data();
        c.constant_bytes = static_cast<int64_t>(v.constant->data->size());
      }
    }
    ops.resize(r.ops.size());
    op_inputs.resize(r.ops.size());
    op_attrs.resize(r.ops.size());
    for (size_t k = 0; k < r.ops.size(); ++k) {
      const RegionOp& o = r.ops[k];
      for (int in : o.inputs) op_inputs[k].push_back(in);
      for (const auto& [name, val] : o.attrs) {
        RelaxPluginAttr a{};
        a.name = name.c_str();
        if (auto* i = std::get_if<int64_t>(&val)) {
          a.kind = kRelaxPluginAttrInt;
          a.i = *i;
        } else if (auto* d = std::get_if<double>(&val)) {
          a.kind = kRelaxPluginAttrFloat;
          a.f = *d;
        } else if (auto* s = std::get_if<std::string>(&val)) {
          a.kind = kRelaxPluginAttrString;
          a.s = s->c_str();
        } else {
          const auto& l = std::get<std::vector<int64_t>>(val);
          a.kind = kRelaxPluginAttrInts;
          a.ints = l.data();
          a.num_ints = static_cast<int32_t>(l.size());
        }
        op_attrs[k].push_back(a);
      }
      RelaxPluginOp& c = ops[k];
      c.op = o.op.c_str();
      c.composite = o.composite.c_str();
      c.composite_index = o.composite_index;
      c.num_inputs = static_cast<int32_t>(op_inputs[k].size());
      c.inputs = op_inputs[k].data();
      c.output = o.output;
      c.num_attrs = static_cast<int32_t>(op_attrs[k].size());
      c.attrs = op_attrs[k].data();
    }
    for (int p : r.params) params.push_back(p);
    for (int o : r.outputs) outputs.push_back(o);
    region.name = r.name.c_str();
    region.target = target.c_str();
    region.text = r.text.c_str();
    region.num_values = static_cast<int32_t>(values.size());
    region.values = values.data();
    region.num_ops = static_cast<int32_t>(ops.size());
    region.ops = ops.data();
    region.num_params = static_cast<int32_t>(params.size());
    region.params = params.data();
    region.num_outputs = static_cast<int32_t>(outputs.size());
    region.outputs = outputs.data();
  }
};

class CAbiPlugin : public CodegenPlugin {
 public:
  CAbiPlugin(std::string path, const RelaxPluginInfo* info) : path_(std::move(path)), info_(info) {}
  const RelaxPluginInfo* info() const { return info_; }
  std::string Name() const override { return info_->name; }
  std::string PatternTable() const override { return info_->patterns ? info_->patterns : ""; }
  std::vector<std::string> TargetKinds() const override {
    std::vector<std::string> out;
    std::string cur;
    for (const char* p = info_->targets ? info_->targets : "";; ++p) {
      if (*p == ',' || *p == '\0') {
        if (!cur.empty()) out.push_back(cur);
        cur.clear();
        if (*p == '\0') break;
      } else if (*p != ' ') {
        cur += *p;
      }
    }
    return out;
  }
  bool MergeRegions() const override { return info_->merge_regions != 0; }
  RegionCode Codegen(const Region& region, const Target& target) const override {
    CRegion view(region, target);
    RelaxPluginResult res{};
    int32_t rc = info_->codegen(&view.region, &res);
    struct Release {
      const RelaxPluginInfo* info;
      RelaxPluginResult* res;
      ~Release() {
        if (info->release) info->release(res);
      }
    } release{info_, &res};
    if (rc != 0)
      RELAX_THROW((res.error
                       ? res.error
                       : "codegen returned " + std::to_string(rc) + " without an error message"));
    RegionCode code;
    if (res.function) code.function = res.function;
    if (res.payload) code.payload = res.payload;
    if (res.library) code.library = res.library;
    if (res.object && res.object_bytes > 0)
      code.object.assign(static_cast<const char*>(res.object),
                         static_cast<size_t>(res.object_bytes));
    return code;
  }

 private:
  std::string path_;
  const RelaxPluginInfo* info_;
};

}  // namespace

std::string LoadPluginLibrary(const std::string& path) {
  // Plugins stay loaded for the life of the process (their pattern tables and codegen are
  // used until the compilation ends).
  std::string where = "codegen plugin '" + path + "'";
  dlerror();
  std::string open_path = path.find('/') == std::string::npos ? "./" + path : path;
  void* h = ::dlopen(open_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    RELAX_THROW("cannot load " << where << ": " << (e ? e : "dlopen failed"));
  }
  auto get = reinterpret_cast<RelaxPluginGetInfoFunc>(::dlsym(h, "relax_plugin_get_info"));
  if (!get) RELAX_THROW(where << " does not export relax_plugin_get_info (is it a relaxc plugin?)");
  const RelaxPluginInfo* info = get(RELAX_PLUGIN_ABI_VERSION);
  if (!info) RELAX_THROW(where << " refused plugin ABI version " << RELAX_PLUGIN_ABI_VERSION);
  if (info->abi_version != RELAX_PLUGIN_ABI_VERSION)
    RELAX_THROW(where << " was built for plugin ABI version " << info->abi_version
                      << ", but this relaxc has version " << RELAX_PLUGIN_ABI_VERSION
                      << " (rebuild the plugin against this relaxc's headers)");
  if (!info->name || !IsValidPluginName(info->name))
    RELAX_THROW(where << " has an invalid name '" << (info->name ? info->name : "(null)")
                      << "' (letters, digits and _)");
  if (!info->codegen) RELAX_THROW(where << " ('" << info->name << "') has no codegen function");
  std::string name = info->name;
  try {
    ParsePatternTable(info->patterns ? info->patterns : "", name,
                      "pattern table of plugin '" + name + "'");
  } catch (const Error& e) {
    RELAX_THROW(where << ": " << e.what());
  }
  // The same library loaded again (a second compile in one process: dlopen returned the same
  // handle, so the same info) is the plugin already registered; another plugin of that name is
  // refused. One load at a time, so two compiles on two threads both find it.
  static std::mutex load_mutex;
  std::lock_guard<std::mutex> lock(load_mutex);
  if (const CodegenPlugin* p = FindPlugin(name)) {
    const auto* same = dynamic_cast<const CAbiPlugin*>(p);
    if (same && same->info() == info) {
      ::dlclose(h);  // the registered plugin holds its own reference
      return name;
    }
    RELAX_THROW(where << ": a codegen plugin named '" << name << "' is already loaded");
  }
  RegisterPlugin(std::make_shared<CAbiPlugin>(path, info));
  return name;
}

}  // namespace relax::partition
