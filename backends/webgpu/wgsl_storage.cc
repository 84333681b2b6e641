// TIR data types in WGSL (see the header).
#include "wgsl_storage.h"

#include <sstream>

#include "relax/support/error.h"

namespace relax::backends::webgpu {

WgslRepr ReprOf(DataType t, const std::string& kernel) {
  if (t.lanes != 1)
    RELAX_THROW("device kernel '" << kernel << "': vector type " << ToString(t)
                                  << " (the WGSL printer takes scalar code)");
  WgslRepr r;
  if (t.is_bool()) {
    r.compute = "bool";
    r.storage_bits = 8;
    return r;
  }
  if (t.is_float()) {
    // f64 values (the intermediates of f32 math the legalization widens) compute in f32; an
    // f64 tensor has no storage (StorageBufferDecl).
    r.compute = "f32";
    r.storage_bits = t.bits;
    r.is_half = t.bits == 16;
    r.is_signed = true;
    return r;
  }
  // Storage-only types are their bit patterns (as the other codegens treat them): bf16 a
  // 16-bit integer, float8 and int4 8-bit signed, uint4 8-bit unsigned.
  int bits = t.bits;
  bool is_signed = t.is_int();
  if (t.is_bfloat16()) bits = 16, is_signed = true;
  if (t.is_float8()) bits = 8, is_signed = true;
  if (t.is_int4()) bits = 8;
  if ((!t.is_int() && !t.is_uint() && !t.is_bfloat16() && !t.is_float8()) ||
      (bits != 8 && bits != 16 && bits != 32 && bits != 64))
    RELAX_THROW("device kernel '" << kernel << "': data type " << ToString(t)
                                  << " has no WGSL representation");
  r.compute = is_signed ? "i32" : "u32";
  r.storage_bits = bits;
  r.is_signed = is_signed;
  return r;
}

std::string LocalElementType(DataType t, const std::string& kernel) {
  WgslRepr r = ReprOf(t, kernel);
  return r.compute == "bool" ? "u32" : r.compute;
}

std::string StorageBufferDecl(int binding, const std::string& name, DataType t, bool written,
                              const std::string& kernel) {
  WgslRepr r = ReprOf(t, kernel);
  std::string elem = r.storage_bits == 32 ? r.compute : "u32";
  if (written && r.storage_bits < 32) elem = "atomic<u32>";
  // Every binding is read_write (layout type "storage"): the memory planner places many tensors
  // in one GPUBuffer, and WebGPU refuses a buffer bound read-only and writable in one dispatch,
  // while writable bindings of one buffer may coexist.
  (void)written;
  std::ostringstream os;
  os << "@group(0) @binding(" << binding << ") var<storage, read_write> " << name << ": array<"
     << elem << ">;\n";
  return os.str();
}

namespace {

// The `bits`-bit field at element i of u32 word `w` (text), as the compute type of `r`.
std::string FromField(const WgslRepr& r, const std::string& field) {
  if (r.compute == "bool") return "(" + field + " != 0u)";
  if (r.is_half) return "relax_f16_bits_to_f32(" + field + ")";
  if (r.compute == "u32") return field;
  const std::string shift = std::to_string(32 - r.storage_bits) + "u";
  return "(bitcast<i32>(" + field + " << " + shift + ") >> " + shift + ")";
}

// Value `v` of the compute type of `r` as the field's bits (in the low bits of a u32).
std::string ToField(const WgslRepr& r, const std::string& v) {
  const std::string mask = r.storage_bits == 8 ? "0xffu" : "0xffffu";
  if (r.compute == "bool") return "select(0u, 1u, " + v + ")";
  if (r.is_half) return "relax_f32_to_f16_bits(" + v + ")";
  if (r.compute == "u32") return "(" + v + " & " + mask + ")";
  return "(bitcast<u32>(" + v + ") & " + mask + ")";
}

}  // namespace

std::string StorageAccessors(const std::string& name, DataType t, bool written,
                             const std::string& kernel) {
  WgslRepr r = ReprOf(t, kernel);
  std::ostringstream os;
  const std::string& c = r.compute;
  if (r.storage_bits == 32) {
    os << "fn ld_" << name << "(i: i32) -> " << c << " { return " << name << "[i]; }\n";
    if (written) os << "fn st_" << name << "(i: i32, v: " << c << ") { " << name << "[i] = v; }\n";
    return os.str();
  }
  if (r.storage_bits == 64 && c == "f32") {
    // float64: the IEEE double's two words, converted to and from f32 (wgsl_helpers.cc).
    os << "fn ld_" << name << "(i: i32) -> f32 { return relax_f64_to_f32(" << name << "[2 * i], "
       << name << "[2 * i + 1]); }\n";
    if (written)
      os << "fn st_" << name << "(i: i32, v: f32) {\n  let d = relax_f32_to_f64(v);\n  " << name
         << "[2 * i] = d.x;\n  " << name << "[2 * i + 1] = d.y;\n}\n";
    return os.str();
  }
  if (r.storage_bits == 64) {
    os << "fn ld_" << name << "(i: i32) -> " << c << " { return "
       << (c == "i32" ? "bitcast<i32>(" + name + "[2 * i])" : name + "[2 * i]") << "; }\n";
    if (written)
      os << "fn st_" << name << "(i: i32, v: " << c << ") {\n  " << name
         << "[2 * i] = " << (c == "i32" ? "bitcast<u32>(v)" : "v") << ";\n  " << name
         << "[2 * i + 1] = " << (c == "i32" ? "select(0u, 0xffffffffu, v < 0)" : "0u") << ";\n}\n";
    return os.str();
  }
  // Packed: `per` elements per word.
  const int per = 32 / r.storage_bits;
  const std::string lg = per == 4 ? "2u" : "1u";
  const std::string lane =
      "(u32(i) & " + std::to_string(per - 1) + "u) * " + std::to_string(r.storage_bits) + "u";
  const std::string mask = r.storage_bits == 8 ? "0xffu" : "0xffffu";
  const std::string word = "u32(i) >> " + lg;
  const std::string read =
      written ? "atomicLoad(&" + name + "[" + word + "])" : name + "[" + word + "]";
  os << "fn ld_" << name << "(i: i32) -> " << c << " {\n  let f = (" << read << " >> (" << lane
     << ")) & " << mask << ";\n  return " << FromField(r, "f") << ";\n}\n";
  if (written)
    os << "fn st_" << name << "(i: i32, v: " << c << ") {\n  let s = " << lane << ";\n"
       << "  atomicAnd(&" << name << "[" << word << "], ~(" << mask << " << s));\n"
       << "  atomicOr(&" << name << "[" << word << "], " << ToField(r, "v") << " << s);\n}\n";
  return os.str();
}

std::string CastText(const std::string& v, DataType from, DataType to, const std::string& kernel) {
  WgslRepr f = ReprOf(from, kernel), t = ReprOf(to, kernel);
  if (from == to) return v;
  if (t.compute == "bool") {
    if (f.compute == "bool") return v;
    if (f.compute == "f32") return "(" + v + " != 0.0)";
    return "(" + v + " != 0" + (f.compute == "u32" ? "u" : "i") + ")";
  }
  if (t.compute == "f32") {
    std::string x = f.compute == "bool"  ? "select(0.0, 1.0, " + v + ")"
                    : f.compute == "f32" ? v
                                         : "f32(" + v + ")";
    if (t.is_half && !f.is_half) return "relax_round_f16(" + x + ")";
    return x;
  }
  // To an integer: first the 32-bit compute type, then wrap to the width.
  std::string x;
  if (f.compute == "bool")
    x = "select(0" + std::string(t.compute == "u32" ? "u" : "i") + ", 1" +
        (t.compute == "u32" ? "u" : "i") + ", " + v + ")";
  else if (f.compute == "f32")
    x = t.compute + "(" + v + ")";
  else if (f.compute != t.compute)
    x = "bitcast<" + t.compute + ">(" + v + ")";
  else
    x = v;
  if (t.storage_bits >= 32) return x;
  const std::string bits = std::to_string(t.storage_bits);
  if (t.compute == "u32") return "(" + x + " & " + (bits == "8" ? "0xffu" : "0xffffu") + ")";
  const std::string shift = std::to_string(32 - t.storage_bits) + "u";
  return "((" + x + " << " + shift + ") >> " + shift + ")";
}

}  // namespace relax::backends::webgpu
