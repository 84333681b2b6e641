// exec-edit: applies one seeded edit to a value of an artifact's executable JSON (section
// "executable") and writes the artifact again with a valid checksum, for the executable-edit
// robustness test (issue 7, run_exec_edits.py).
//
//   exec-edit IN.so OUT.so SEED
//
// Edit kinds: an integer value +1, -1, set to 0, -1 or 2^31; an array halved (truncated) or
// doubled (its elements repeated); two register operands of one call swapped; an op/kind/
// callee/dtype string replaced by another valid one; an object field deleted. The kind is drawn
// first (weights below), then the location, uniformly among the values of that kind. Prints one
// line `edit <kind> at <JSON pointer> parses <yes|no>` (whether Executable::FromJSON accepts the
// result). Deterministic per (input, seed): its own splitmix64 generator, no std distributions.
// Exit status: 0 written, 1 on error (`error: ...`).
#include <cstdint>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "relax/runtime/artifact_format.h"
#include "relax/runtime/executable.h"
#include "relax/support/error.h"

namespace {

using nlohmann::json;
using relax::runtime::SectionData;

struct Rng {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return static_cast<size_t>(Next() % n); }
};

// Locations of the edit candidates, as JSON pointers.
struct Candidates {
  std::vector<json::json_pointer> ints, arrays, swaps, strings, fields;
};

bool IsEditableString(const std::string& key) {
  return key == "op" || key == "kind" || key == "func" || key == "dtype";
}

void Collect(const json& j, const json::json_pointer& at, Candidates* c) {
  if (j.is_number_integer()) {
    c->ints.push_back(at);
  } else if (j.is_array()) {
    if (!j.empty()) c->arrays.push_back(at);
    for (size_t i = 0; i < j.size(); ++i) Collect(j[i], at / i, c);
  } else if (j.is_object()) {
    if (j.contains("args") && j["args"].is_array()) {
      int regs = 0;
      for (const json& a : j["args"])
        if (a.is_object() && a.value("kind", "") == "reg") ++regs;
      if (regs >= 2) c->swaps.push_back(at);
    }
    for (auto it = j.begin(); it != j.end(); ++it) {
      c->fields.push_back(at / it.key());
      if (it.value().is_string() && IsEditableString(it.key())) c->strings.push_back(at / it.key());
      Collect(it.value(), at / it.key(), c);
    }
  }
}

// Every callee name in the executable (for replacing one callee by another).
void Callees(const json& j, std::set<std::string>* out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "func" && it.value().is_string()) out->insert(it.value().get<std::string>());
      Callees(it.value(), out);
    }
  } else if (j.is_array()) {
    for (const json& e : j) Callees(e, out);
  }
}

std::string PickOther(const std::vector<std::string>& options, const std::string& now, Rng& rng) {
  std::vector<std::string> rest;
  for (const auto& o : options)
    if (o != now) rest.push_back(o);
  return rest.empty() ? now + "x" : rest[rng.Below(rest.size())];
}

// Applies one edit to `exec`; returns its description.
std::string Edit(json& exec, Rng& rng) {
  Candidates c;
  Collect(exec, json::json_pointer(), &c);
  // Weights: integer edits 10, array sizes 4, register swaps 2, strings 2, field deletion 1.
  static const int kWeights[] = {10, 4, 2, 2, 1};
  const std::vector<json::json_pointer>* pools[] = {&c.ints, &c.arrays, &c.swaps, &c.strings,
                                                    &c.fields};
  int total = 0;
  for (int k = 0; k < 5; ++k)
    if (!pools[k]->empty()) total += kWeights[k];
  if (total == 0) RELAX_THROW("the executable has nothing to edit");
  int r = static_cast<int>(rng.Below(static_cast<size_t>(total))), kind = 0;
  for (; kind < 5; ++kind) {
    if (pools[kind]->empty()) continue;
    if (r < kWeights[kind]) break;
    r -= kWeights[kind];
  }
  const json::json_pointer at = (*pools[kind])[rng.Below(pools[kind]->size())];
  json& v = exec[at];
  const std::string where = at.to_string();
  switch (kind) {
    case 0: {
      static const char* kNames[] = {"+1", "-1", "=0", "=-1", "=2^31"};
      size_t e = rng.Below(5);
      int64_t x = v.get<int64_t>();
      // Wrapping arithmetic: the values may already be at the int64 limits.
      int64_t nx = e == 0   ? static_cast<int64_t>(static_cast<uint64_t>(x) + 1)
                   : e == 1 ? static_cast<int64_t>(static_cast<uint64_t>(x) - 1)
                   : e == 2 ? 0
                   : e == 3 ? -1
                            : (int64_t{1} << 31);
      v = nx;
      return std::string("int") + kNames[e] + " at " + where;
    }
    case 1: {
      if (rng.Below(2) == 0) {
        json half = json::array();
        for (size_t i = 0; i < v.size() / 2; ++i) half.push_back(v[i]);
        v = half;
        return "array-x0.5 at " + where;
      }
      json twice = v;
      for (const json& e : v) twice.push_back(e);
      v = twice;
      return "array-x2 at " + where;
    }
    case 2: {
      std::vector<size_t> regs;
      for (size_t i = 0; i < v["args"].size(); ++i)
        if (v["args"][i].value("kind", "") == "reg") regs.push_back(i);
      size_t a = rng.Below(regs.size()), b = rng.Below(regs.size() - 1);
      if (b >= a) ++b;
      std::swap(v["args"][regs[a]]["value"], v["args"][regs[b]]["value"]);
      return "swap-regs " + std::to_string(regs[a]) + "," + std::to_string(regs[b]) + " at " +
             where;
    }
    case 3: {
      const std::string key = at.back(), now = v.get<std::string>();
      std::vector<std::string> options;
      if (key == "op") {
        options = {"call", "ret", "goto", "if"};
      } else if (key == "kind") {
        options = {"reg", "const", "imm", "int", "float", "string", "shape", "tensor"};
      } else if (key == "dtype") {
        options = {"float32", "float64", "int64", "int32", "uint8", "bool", "float16"};
      } else {
        std::set<std::string> names;
        Callees(exec, &names);
        options.assign(names.begin(), names.end());
      }
      v = PickOther(options, now, rng);
      return "string '" + now + "'->'" + v.get<std::string>() + "' at " + where;
    }
    default: {
      json& parent = exec[at.parent_pointer()];
      parent.erase(at.back());
      return "delete-field at " + where;
    }
  }
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) RELAX_THROW("cannot read '" << path << "'");
  return std::string(std::istreambuf_iterator<char>(f), {});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: exec-edit IN.so OUT.so SEED\n";
    return 2;
  }
  try {
    const std::string in = argv[1], out = argv[2];
    Rng rng{std::stoull(argv[3]) * 0x2545f4914f6cdd1dULL + 1};
    const std::string bytes = ReadFile(in);
    auto entries = relax::runtime::ParseSections(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                 bytes.size(), "artifact '" + in + "'");
    std::vector<SectionData> sections;
    size_t exec_index = entries.size();
    for (const auto& e : entries) {
      if (e.name == "executable") exec_index = sections.size();
      sections.push_back({e.name, bytes.substr(e.offset, e.size), e.alignment});
    }
    if (exec_index == entries.size())
      RELAX_THROW("artifact '" << in << "' has no executable section");
    std::string* exec_text = &sections[exec_index].bytes;
    json exec = json::parse(*exec_text);
    const std::string what = Edit(exec, rng);
    *exec_text = exec.dump();
    std::string parses = "yes";
    try {
      relax::runtime::Executable::FromJSON(*exec_text);
    } catch (const relax::Error&) {
      parses = "no";
    }
    relax::runtime::WriteSections(out, sections);
    std::cout << "edit " << what << " parses " << parses << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
