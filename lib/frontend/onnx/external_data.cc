// External tensor data (ONNX IR spec, "External Tensor Data" in docs/ExternalData.md of the
// ONNX repository): a TensorProto with data_location = EXTERNAL keeps its bytes in a file named
// by the `location` entry of `external_data`, relative to the model's folder, at `offset` (default
// 0) for `length` bytes. relaxc reads exactly the bytes the tensor's dims and type declare, and
// only after checking them against `length` (when given) and the file's size. This file resolves
// every such tensor of a model (initializers, Constant node attributes, subgraphs) into raw_data
// before the import, so the rest of the importer sees only in-model data.
#include "external_data.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <string>

#include "import_context.h"
#include "relax/support/error.h"

namespace relax::frontend::onnx_import {
namespace {

namespace fs = std::filesystem;

int64_t ParseCount(const std::string& text, const std::string& key, const std::string& what) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || text[0] == '-' || text[0] == '+' || ec != std::errc() ||
      end != text.data() + text.size())
    RELAX_THROW(what << ": external data '" << key << "' is '" << text
                     << "', not a non-negative integer below 2^63");
  return v;
}

// Bytes of raw_data a tensor of `t`'s dims and type holds (int4/uint4: two per byte).
int64_t DeclaredRawBytes(const onnx::TensorProto& t, const std::string& what) {
  DataType dt = OnnxDType(t.data_type(), what);
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  std::optional<int64_t> numel = CheckedByteSize(dims, 1);
  if (!numel)
    RELAX_THROW(what << ": declared shape " << DimsText(dims)
                     << " has a negative dim or more than 2^63-1 elements");
  if (dt.is_int4()) return *numel / 2 + *numel % 2;  // (n + 1) / 2 overflows at 2^63-1
  std::optional<int64_t> bytes = CheckedByteSize(dims, dt.bytes());
  if (!bytes)
    RELAX_THROW(what << ": declared shape " << DimsText(dims) << " has more than 2^63-1 bytes");
  return *bytes;
}

// The file `location` names, checked to lie inside `model_dir` (after resolving symlinks and
// "..": a model must not make the compiler read files outside its own folder).
fs::path ResolveLocation(const std::string& location, const fs::path& model_dir,
                         const std::string& what) {
  if (location.empty()) RELAX_THROW(what << ": external data has no 'location'");
  if (location.find('\0') != std::string::npos)
    RELAX_THROW(what << ": external data location contains a NUL byte");
  fs::path rel(location);
  if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory())
    RELAX_THROW(what << ": external data location '" << location
                     << "' is an absolute path; it must be relative to the model's folder");
  std::error_code ec;
  fs::path root = fs::canonical(model_dir, ec);
  if (ec)
    RELAX_THROW(what << ": cannot resolve the model's folder '" << model_dir.string()
                     << "': " << ec.message());
  fs::path full = fs::weakly_canonical(root / rel, ec);
  if (ec)
    RELAX_THROW(what << ": cannot resolve external data location '" << location
                     << "': " << ec.message());
  auto [r, f] = std::mismatch(root.begin(), root.end(), full.begin(), full.end());
  if (r != root.end())
    RELAX_THROW(what << ": external data location '" << location
                     << "' lies outside the model's folder '" << root.string() << "'");
  return full;
}

// What the model's tensors have read so far: per file, the byte ranges taken (begin -> end, and
// by which tensor). Ranges may not overlap, so a model reads each file at most once in total,
// however many tensors point into it (80 tensors naming one 16 MiB range read 1.3 GB before).
struct Reader {
  fs::path model_dir;
  std::map<std::string, std::map<int64_t, std::pair<int64_t, std::string>>> taken;
};

void Resolve(onnx::TensorProto* t, Reader* r, const std::string& what) {
  const fs::path& model_dir = r->model_dir;
  if (t->data_location() != onnx::TensorProto::EXTERNAL) return;
  if (model_dir.empty())
    RELAX_THROW(what << ": the tensor's data is external, but the model was given without a "
                        "folder to read it from");
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;
  for (const auto& kv : t->external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset") {
      offset = ParseCount(kv.value(), "offset", what);
    } else if (kv.key() == "length") {
      length = ParseCount(kv.value(), "length", what);
    }  // "checksum" and unknown keys carry no data; ignored
  }
  // The bytes the tensor's declared dims and type need, known before the file is opened: a
  // model cannot make the compiler read more than its tensors declare (a `[1]` initializer
  // pointing at a large file reads 4 bytes, not the file).
  const int64_t expected = DeclaredRawBytes(*t, what);
  if (length >= 0 && length != expected)
    RELAX_THROW(
        what << ": external data 'length' is " << length << " bytes, but its declared shape "
             << DimsText({t->dims().begin(), t->dims().end()}) << " of "
             << ToString(OnnxDType(t->data_type(), what)) << " needs " << expected << " bytes");
  length = expected;
  fs::path file = ResolveLocation(location, model_dir, what);
  struct stat st {};
  if (stat(file.c_str(), &st) != 0)
    RELAX_THROW(what << ": cannot open external data file '" << location
                     << "': " << std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    RELAX_THROW(what << ": external data file '" << location << "' is not a regular file");
  const int64_t size = static_cast<int64_t>(st.st_size);
  if (offset > size)
    RELAX_THROW(what << ": external data offset " << offset << " is past the end of '" << location
                     << "' (" << size << " bytes)");
  if (length > size - offset)
    RELAX_THROW(what << ": external data of " << length << " bytes at offset " << offset
                     << " runs past the end of '" << location << "' (" << size << " bytes)");
  if (length > 0) {
    auto& ranges = r->taken[file.string()];
    auto next = ranges.lower_bound(offset + length);
    if (next != ranges.begin() && std::prev(next)->second.first > offset)
      RELAX_THROW(what << ": its external data (bytes " << offset << " to " << offset + length
                       << " of '" << location << "') overlaps that of "
                       << std::prev(next)->second.second
                       << "; each tensor must have its own bytes");
    ranges.emplace(offset, std::make_pair(offset + length, what));
  }
  std::ifstream in(file, std::ios::binary);
  std::string bytes(static_cast<size_t>(length), '\0');
  if (!in.seekg(offset) || !in.read(bytes.data(), length))
    RELAX_THROW(what << ": reading " << length << " bytes of '" << location << "' failed");
  t->clear_external_data();
  t->set_data_location(onnx::TensorProto::DEFAULT);
  t->set_raw_data(std::move(bytes));
}

void ResolveGraph(onnx::GraphProto* g, Reader* r, int depth);

void ResolveAttribute(onnx::AttributeProto* a, Reader* r, int depth, const std::string& node) {
  std::string what = "attribute '" + a->name() + "' of node '" + node + "'";
  if (a->has_t()) Resolve(a->mutable_t(), r, what);
  for (auto& t : *a->mutable_tensors()) Resolve(&t, r, what);
  if (a->has_g()) ResolveGraph(a->mutable_g(), r, depth + 1);
  for (auto& g : *a->mutable_graphs()) ResolveGraph(&g, r, depth + 1);
}

void ResolveGraph(onnx::GraphProto* g, Reader* r, int depth) {
  // Protobuf itself limits message nesting (100 by default), so this recursion is bounded.
  if (depth > 128) RELAX_THROW("subgraphs are nested more than 128 deep");
  for (auto& t : *g->mutable_initializer()) Resolve(&t, r, "initializer '" + t.name() + "'");
  for (auto& n : *g->mutable_node())
    for (auto& a : *n.mutable_attribute())
      ResolveAttribute(&a, r, depth, n.name().empty() && n.output_size() ? n.output(0) : n.name());
}

}  // namespace

void LoadExternalData(onnx::ModelProto* model, const std::string& model_dir) {
  Reader reader{fs::path(model_dir), {}};
  ResolveGraph(model->mutable_graph(), &reader, 0);
}

}  // namespace relax::frontend::onnx_import
