// EvalShapeProgram (shape_program.h).
#include "relax/runtime/shape_program.h"

#include <algorithm>
#include <string>

#include "relax/support/error.h"

namespace relax::runtime {

std::vector<int64_t> EvalShapeProgram(const std::vector<int64_t>& heap,
                                      const std::vector<int64_t>& prog, bool require_nonneg) {
  const char* fn = "shape program";
  size_t pos = 0;
  auto next = [&](const char* what) -> int64_t {
    if (pos >= prog.size())
      RELAX_THROW(fn << ": truncated (expected " << what << " at position " << pos << ")");
    return prog[pos++];
  };
  int64_t ndim = next("ndim");
  if (ndim < 0 || ndim > static_cast<int64_t>(prog.size()))
    RELAX_THROW(fn << ": bad ndim " << ndim);
  std::vector<int64_t> out;
  std::vector<int64_t> stack;
  for (int64_t d = 0; d < ndim; ++d) {
    int64_t ntok = next("token count");
    if (ntok <= 0 || ntok > static_cast<int64_t>(prog.size()))
      RELAX_THROW(fn << ": dim " << d << " has bad token count " << ntok);
    stack.clear();
    for (int64_t t = 0; t < ntok; ++t) {
      int64_t op = next("opcode");
      int64_t operand = next("operand");
      if (op == kShapePush) {
        stack.push_back(operand);
        continue;
      }
      if (op == kShapeLoad) {
        if (operand < 0 || operand >= static_cast<int64_t>(heap.size()))
          RELAX_THROW(fn << ": shape heap index " << operand << " out of range [0, " << heap.size()
                         << ")");
        stack.push_back(heap[operand]);
        continue;
      }
      if (op < kShapeAdd || op >= kShapeOpcodeEnd)
        RELAX_THROW(fn << ": unknown opcode " << op << " in dim " << d);
      if (stack.size() < 2) RELAX_THROW(fn << ": stack underflow in dim " << d);
      int64_t b = stack.back();
      stack.pop_back();
      int64_t x = stack.back();
      int64_t r = 0;
      bool ovf = false;
      switch (op) {
        case kShapeAdd:
          ovf = __builtin_add_overflow(x, b, &r);
          break;
        case kShapeSub:
          ovf = __builtin_sub_overflow(x, b, &r);
          break;
        case kShapeMul:
          ovf = __builtin_mul_overflow(x, b, &r);
          break;
        case kShapeFloorDiv:
        case kShapeFloorMod:
        case kShapeTruncDiv:
        case kShapeTruncMod: {
          if (b == 0) RELAX_THROW(fn << ": division by zero in dim " << d);
          bool is_div = op == kShapeFloorDiv || op == kShapeTruncDiv;
          if (x == INT64_MIN && b == -1) {
            ovf = is_div;
            r = 0;
          } else if (op == kShapeTruncDiv) {
            r = x / b;
          } else if (op == kShapeTruncMod) {
            r = x % b;
          } else if (op == kShapeFloorDiv) {
            r = x / b;
            if ((x % b != 0) && ((x < 0) != (b < 0))) --r;
          } else {
            r = x % b;
            if (r != 0 && ((r < 0) != (b < 0))) r += b;
          }
          break;
        }
        case kShapeMin:
          r = std::min(x, b);
          break;
        case kShapeMax:
          r = std::max(x, b);
          break;
        case kShapeEQ:
          r = x == b;
          break;
        case kShapeNE:
          r = x != b;
          break;
        case kShapeLT:
          r = x < b;
          break;
        case kShapeLE:
          r = x <= b;
          break;
        case kShapeGT:
          r = x > b;
          break;
        case kShapeGE:
          r = x >= b;
          break;
        case kShapeAnd:
          r = (x != 0) && (b != 0);
          break;
        case kShapeOr:
          r = (x != 0) || (b != 0);
          break;
      }
      if (ovf) RELAX_THROW(fn << ": int64 overflow in dim " << d);
      stack.back() = r;
    }
    if (stack.size() != 1)
      RELAX_THROW(fn << ": dim " << d << " leaves " << stack.size()
                     << " values on the stack (expected 1)");
    if (require_nonneg && stack[0] < 0)
      RELAX_THROW(fn << ": dim " << d << " evaluates to negative size " << stack[0]);
    out.push_back(stack[0]);
  }
  if (pos != prog.size())
    RELAX_THROW(fn << ": " << (prog.size() - pos) << " trailing values after " << ndim << " dims");
  return out;
}

}  // namespace relax::runtime
