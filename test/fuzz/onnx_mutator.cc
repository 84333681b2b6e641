// The structured ONNX model mutator (onnx_mutator.h).
#include "onnx_mutator.h"

#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace relax_fuzz {

namespace {

// Recent inputs that reached op conversion: where a mutation starts from an input that does not
// parse, it starts from one of these instead (libFuzzer calls the mutator and the target on one
// thread).
constexpr size_t kPoolSize = 256;
std::vector<std::string> g_pool;
size_t g_pool_next = 0;
std::unordered_set<size_t> g_converting_hashes;  // of every input that reached conversion

size_t HashBytes(const uint8_t* data, size_t size) {
  return std::hash<std::string_view>{}(std::string_view(reinterpret_cast<const char*>(data), size));
}

const char* const kOpTypes[] = {"Add",
                                "Conv",
                                "Reshape",
                                "Slice",
                                "Gather",
                                "Concat",
                                "Resize",
                                "MatMul",
                                "Transpose",
                                "Expand",
                                "Pad",
                                "ReduceSum",
                                "Softmax",
                                "Cast",
                                "Split",
                                "Squeeze",
                                "Unsqueeze",
                                "Tile",
                                "ConstantOfShape",
                                "Range",
                                "Where",
                                "MaxPool",
                                "BatchNormalization",
                                "Gemm",
                                "Shape",
                                "NonZero",
                                "Einsum",
                                "TopK",
                                "If",
                                "Loop",
                                "LSTM",
                                "ScatterND",
                                "Trilu",
                                "OneHot"};
const int64_t kDims[] = {0,  1,         2,         3,         -1,
                         -7, 1LL << 31, 1LL << 40, 1LL << 62, std::numeric_limits<int64_t>::max()};
const char* const kLocations[] = {
    "weights.bin", "missing.bin", "../weights.bin", "/etc/passwd", "sub/../weights.bin", "", "."};

template <typename T>
T Pick(std::mt19937_64& rng, const T* items, size_t n) {
  return items[rng() % n];
}

// One model-level edit. Returns false when the chosen edit has nothing to act on.
bool MutateModel(onnx::ModelProto* m, std::mt19937_64& rng) {
  onnx::GraphProto* g = m->mutable_graph();
  auto dim = [&] { return Pick(rng, kDims, std::size(kDims)); };
  // Edits 1, 3, 4, 6, 7 and 8 are mostly refused by the checks before conversion: drawn 1 time in
  // 20 each, the edits that reach the converters the rest.
  static const int kWeighted[] = {0, 0, 0, 2, 2, 2, 2, 5, 5, 5, 9, 9, 9, 9, 3, 8, 1, 4, 6, 7};
  switch (kWeighted[rng() % std::size(kWeighted)]) {
    case 0: {  // declared input dim
      if (g->input_size() == 0) return false;
      auto* shape = g->mutable_input(rng() % g->input_size())
                        ->mutable_type()
                        ->mutable_tensor_type()
                        ->mutable_shape();
      if (shape->dim_size() == 0 || rng() % 4 == 0) {
        shape->add_dim()->set_dim_value(dim());
      } else {
        auto* d = shape->mutable_dim(rng() % shape->dim_size());
        if (rng() % 3 == 0)
          d->set_dim_param(rng() % 2 ? "n" : "m");
        else
          d->set_dim_value(dim());
      }
      return true;
    }
    case 1: {  // initializer dims no longer match the data
      if (g->initializer_size() == 0) return false;
      auto* t = g->mutable_initializer(rng() % g->initializer_size());
      if (t->dims_size() == 0 || rng() % 3 == 0)
        t->add_dims(dim());
      else
        t->set_dims(rng() % t->dims_size(), dim());
      return true;
    }
    case 2: {  // attribute of the wrong type or value
      if (g->node_size() == 0) return false;
      auto* n = g->mutable_node(rng() % g->node_size());
      onnx::AttributeProto* a = n->attribute_size() && rng() % 3
                                    ? n->mutable_attribute(rng() % n->attribute_size())
                                    : n->add_attribute();
      if (a->name().empty()) a->set_name(rng() % 2 ? "axis" : "perm");
      switch (rng() % 4) {
        case 0:
          a->set_type(onnx::AttributeProto::INT);
          a->set_i(dim());
          break;
        case 1:
          a->set_type(onnx::AttributeProto::FLOAT);
          a->set_f(-1.5f);
          break;
        case 2:
          a->set_type(onnx::AttributeProto::INTS);
          a->add_ints(dim());
          break;
        default:
          a->set_type(onnx::AttributeProto::STRING);
          a->set_s("bogus");
          break;
      }
      return true;
    }
    case 3: {  // dangling input, or an input that is a later node's output (a cycle)
      if (g->node_size() == 0) return false;
      auto* n = g->mutable_node(rng() % g->node_size());
      std::string name = "dangling";
      const auto& other = g->node(rng() % g->node_size());
      if (rng() % 2 && other.output_size()) name = other.output(0);
      if (n->input_size() == 0 || rng() % 4 == 0)
        n->add_input(name);
      else
        n->set_input(rng() % n->input_size(), name);
      return true;
    }
    case 4: {  // external data
      if (g->initializer_size() == 0) return false;
      auto* t = g->mutable_initializer(rng() % g->initializer_size());
      t->clear_raw_data();
      t->set_data_location(onnx::TensorProto::EXTERNAL);
      t->clear_external_data();
      auto* kv = t->add_external_data();
      kv->set_key("location");
      kv->set_value(Pick(rng, kLocations, std::size(kLocations)));
      if (rng() % 2) {
        auto* off = t->add_external_data();
        off->set_key(rng() % 2 ? "offset" : "length");
        off->set_value(std::to_string(rng() % 8192));
      }
      return true;
    }
    case 5: {  // op type
      if (g->node_size() == 0) return false;
      g->mutable_node(rng() % g->node_size())
          ->set_op_type(Pick(rng, kOpTypes, std::size(kOpTypes)));
      return true;
    }
    case 6: {  // element type of an input, output or initializer
      int elem = static_cast<int>(rng() % 24);
      if (g->input_size() && rng() % 2)
        g->mutable_input(rng() % g->input_size())
            ->mutable_type()
            ->mutable_tensor_type()
            ->set_elem_type(elem);
      else if (g->initializer_size())
        g->mutable_initializer(rng() % g->initializer_size())->set_data_type(elem);
      else
        return false;
      return true;
    }
    case 7: {  // opset
      if (m->opset_import_size() == 0) return false;
      m->mutable_opset_import(rng() % m->opset_import_size())
          ->set_version(static_cast<int64_t>(rng() % 25));
      return true;
    }
    case 8: {  // drop or duplicate a node
      if (g->node_size() == 0) return false;
      int i = static_cast<int>(rng() % g->node_size());
      if (rng() % 2) {
        *g->add_node() = g->node(i);
      } else {
        g->mutable_node()->DeleteSubrange(i, 1);
      }
      return true;
    }
    default: {  // byte-level edit of one initializer's raw data
      if (g->initializer_size() == 0) return false;
      auto* t = g->mutable_initializer(rng() % g->initializer_size());
      std::string raw = t->raw_data();
      size_t cap = raw.size() + 16;
      raw.resize(cap);
      size_t n =
          LLVMFuzzerMutate(reinterpret_cast<uint8_t*>(raw.data()), t->raw_data().size(), cap);
      raw.resize(n);
      t->set_raw_data(raw);
      return true;
    }
  }
}

// Writes `m` into `out` (capacity max_size); 0 when it does not serialize or fit.
size_t WriteModel(const onnx::ModelProto& m, uint8_t* out, size_t max_size) {
  std::string bytes;
  if (!m.SerializeToString(&bytes) || bytes.empty() || bytes.size() > max_size) return 0;
  std::copy(bytes.begin(), bytes.end(), out);
  return bytes.size();
}

}  // namespace

std::string MakeModelDir() {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("relax_onnx_fuzz_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "weights.bin", std::ios::binary) << std::string(4096, '\x01');
  return dir.string();
}

std::string InitModelFuzzer(void (*report)()) {
  std::string dir = MakeModelDir();
  atexit(report);
  return dir;
}

void RememberConverting(const uint8_t* data, size_t size) {
  g_converting_hashes.insert(HashBytes(data, size));
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (g_pool.size() < kPoolSize) {
    g_pool.push_back(std::move(bytes));
  } else {
    g_pool[g_pool_next] = std::move(bytes);
    g_pool_next = (g_pool_next + 1) % kPoolSize;
  }
}

size_t Mutate(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  onnx::ModelProto m;
  std::mt19937_64 rng(seed);
  if (size == 0 || rng() % 32 == 0) return LLVMFuzzerMutate(data, size, max_size);
  // An input that stopped before conversion (or never ran) starts over, 3 times in 4, from one
  // that reached it, so edits pile up on models the converters see.
  const bool from_pool =
      !g_pool.empty() && !g_converting_hashes.count(HashBytes(data, size)) && rng() % 4 != 0;
  if (from_pool || !m.ParseFromArray(data, static_cast<int>(size))) {
    if (g_pool.empty()) return LLVMFuzzerMutate(data, size, max_size);
    if (!m.ParseFromString(g_pool[rng() % g_pool.size()]))
      return LLVMFuzzerMutate(data, size, max_size);
  }
  bool changed = false;
  for (int k = 0, edits = 1 + static_cast<int>(rng() % 2); k < edits; ++k)
    changed |= MutateModel(&m, rng);
  if (!changed) return LLVMFuzzerMutate(data, size, max_size);
  size_t n = WriteModel(m, data, max_size);
  return n ? n : LLVMFuzzerMutate(data, size, max_size);
}

// Crossover at the model level: a random node of the second model is appended to the first one's
// graph, its inputs rewired to values the first graph defines (graph inputs, initializers, node
// outputs) and its outputs renamed, so the result stays a well-formed graph for the converters.
// Byte-level crossover would break the protobuf framing of most results.
size_t CrossOver(const uint8_t* data1, size_t size1, const uint8_t* data2, size_t size2,
                 uint8_t* out, size_t max_out_size, unsigned int seed) {
  std::mt19937_64 rng(seed);
  onnx::ModelProto a, b;
  if (!a.ParseFromArray(data1, static_cast<int>(size1))) return 0;
  if (!b.ParseFromArray(data2, static_cast<int>(size2)) || b.graph().node_size() == 0)
    return WriteModel(a, out, max_out_size);
  onnx::GraphProto* g = a.mutable_graph();
  std::vector<std::string> defined;
  for (const auto& in : g->input()) defined.push_back(in.name());
  for (const auto& t : g->initializer()) defined.push_back(t.name());
  for (const auto& n : g->node())
    for (const auto& o : n.output()) defined.push_back(o);
  if (defined.empty()) return WriteModel(a, out, max_out_size);
  onnx::NodeProto* n = g->add_node();
  *n = b.graph().node(static_cast<int>(rng() % b.graph().node_size()));
  for (int i = 0; i < n->input_size(); ++i)
    if (!n->input(i).empty()) n->set_input(i, defined[rng() % defined.size()]);
  for (int i = 0; i < n->output_size(); ++i)
    if (!n->output(i).empty())
      n->set_output(i, "xover" + std::to_string(g->node_size()) + "_" + std::to_string(i));
  return WriteModel(a, out, max_out_size);
}

}  // namespace relax_fuzz
