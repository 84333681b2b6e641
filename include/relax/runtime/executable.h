// The VM executable: bytecode, constant pool, function table and the I/O
// signature with symbolic dims. The compiler (lib/lower/vm_codegen.cc) builds
// one; it is serialized as JSON into the artifact (see artifact.h) and the VM
// (lib/vm) loads and runs it. Format version: kExecutableVersion.
#ifndef RELAX_RUNTIME_EXECUTABLE_H_
#define RELAX_RUNTIME_EXECUTABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "relax/runtime/shape_program.h"

namespace relax::runtime {

/// The version this compiler writes and the oldest this runtime still reads. 2 added optional
/// inputs (TensorSig::default_constant); a version-1 executable is read as one without them.
constexpr int kExecutableVersion = 2;
constexpr int kOldestExecutableVersion = 1;

/// Per-dim modes of a vm.builtin.match_shape pattern (mode, value): the dim must equal
/// `value`; the dim is stored into heap[value]; the dim must equal heap[value].
enum MatchShapeMode : int64_t { kMatchConst = 0, kMatchBind = 1, kMatchCheck = 2 };

/// An instruction operand.
struct Arg {
  enum Kind { kReg = 0, kConst = 1, kImm = 2 };
  Kind kind = kReg;
  int64_t value = 0;  // register index, constant-pool index, or immediate int64
};

/// One VM instruction. The VM is a register machine:
///  - kCall: regs[dst] = func(args...); `func` names a VM function of this
///    executable, a builtin ("vm.builtin.*"), or a kernel symbol of the
///    artifact's shared object (RelaxPackedFunc ABI, c_api.h). dst < 0 drops it.
///  - kRet: return regs[reg].
///  - kGoto: pc += offset.
///  - kIf: if regs[cond] (an int) is zero, pc += offset, else pc += 1.
struct Instruction {
  enum Op { kCall = 0, kRet = 1, kGoto = 2, kIf = 3 };
  Op op = kCall;
  std::string func;
  std::vector<Arg> args;
  int64_t dst = -1;
  int64_t reg = 0;     // kRet
  int64_t cond = 0;    // kIf
  int64_t offset = 0;  // kGoto, kIf
};

/// A constant-pool entry.
struct Constant {
  enum Kind { kInt = 0, kFloat = 1, kString = 2, kShape = 3, kTensor = 4 };
  Kind kind = kInt;
  int64_t int_value = 0;
  double float_value = 0;
  std::string str;             // kString; kTensor: dtype ("float32", "int64", ...)
  std::vector<int64_t> shape;  // kShape: the values; kTensor: the tensor shape
  uint64_t params_offset = 0;  // kTensor: byte offset in the params section (64-aligned)
  uint64_t nbytes = 0;         // kTensor: byte size
};

struct Function {
  std::string name;
  std::vector<std::string> param_names;
  int64_t num_regs = 0;  // params occupy regs [0, num_params)
  std::vector<Instruction> code;
};

/// One input or output of the entry function. A dim is either a fixed size
/// (sym empty, value = size) or a symbolic var (sym = its name, e.g. "batch").
struct DimSig {
  std::string sym;
  int64_t value = -1;
};
/// `sequence`: the value is an ONNX sequence (a VM tuple of tensors of element type `dtype`;
/// `dims` is empty, the elements' shapes are not part of the signature).
struct TensorSig {
  std::string name;
  std::string dtype;
  std::vector<DimSig> dims;
  bool sequence = false;
  /// Where the entry function takes (or returns) it: "" = host memory, else a device
  /// ("vulkan:0"; ids relative to the device the artifact runs on). The VM copies a caller's
  /// tensor that is elsewhere (one copy) before the call, and device outputs to the host for
  /// callers that want host tensors.
  std::string device;
  /// An input with a default (an optional input; version >= 2): the index of a kTensor constant
  /// of the constant pool (its bytes in the params section) of the input's dtype and a shape
  /// that fits `dims`, which the VM takes when the caller gives no value; -1: required.
  int64_t default_constant = -1;
};

struct Executable {
  int version = kExecutableVersion;
  std::string entry = "main";
  std::vector<Function> functions;
  std::vector<Constant> constants;
  std::vector<TensorSig> inputs;
  std::vector<TensorSig> outputs;
  /// Compiled with device placement (place-devices): tensors the kernels use live on the device
  /// (DeviceMemoryScope); false in older GPU artifacts, whose runs stage host tensors.
  bool placed = false;

  /// Serializes to JSON text.
  std::string ToJSON() const;
  /// A readable listing, one instruction per line, for tests and debugging: a line
  ///   `input 'b' default c7` per input with a default, then per function
  ///   `func @loop(i, n, x) regs=12` then `  3: r5 = vm.builtin.move(r4)`, `  7: if r6 else +9`,
  ///   `  15: goto -12`, `  16: ret r2`; operands print as `rN`, `cN` (constant), `#N` (imm).
  std::string ToText() const;
  /// Parses JSON text. Throws relax::Error naming the bad field on malformed or
  /// wrong-version input (never crashes).
  static Executable FromJSON(const std::string& text);
};

}  // namespace relax::runtime

#endif  // RELAX_RUNTIME_EXECUTABLE_H_
