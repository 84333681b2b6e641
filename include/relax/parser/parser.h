// Parser for the textual IR written by ToString(IRModule): Relax functions with
// StructInfo and symbolic shapes, TIR PrimFuncs, module attributes, and
// constants (inline, or by content digest resolved against a ConstantTable).
#ifndef RELAX_PARSER_PARSER_H_
#define RELAX_PARSER_PARSER_H_

#include <cstdint>
#include <map>
#include <string>

#include "relax/ir/module.h"

namespace relax {

/// Large constants are printed by reference (`const[f32, (8, 3, 3, 3), digest=0x...]`);
/// the table maps each digest (ConstantNode::digest, a content hash of dtype, shape and
/// bytes) to the constant node that holds the data.
struct ConstantTable {
  std::map<uint64_t, Expr> by_digest;
  /// Adds `c` (a ConstantNode) under its digest; a no-op for other nodes.
  void Add(const Expr& c);
};

/// Every constant reachable from the module's Relax functions, by digest.
ConstantTable CollectConstants(const IRModule& mod);

/// Parses a whole module. `filename` is used in messages; `constants` (may be
/// null) resolves `digest=` references.
/// Errors: throws relax::Error with `filename:line:col: error: <what>`, e.g.
/// "expected ')', found ','", unknown op, undefined variable, dataflow var used
/// outside its block, symbolic var used before it is defined, unknown digest,
/// and StructInfo inference failures of op calls (arity, shape mismatch: the
/// message of the op's inference, which names the op and the dims) or an
/// annotation that provably contradicts the inferred StructInfo.
/// Never crashes on malformed input.
IRModule ParseModule(const std::string& text, const std::string& filename = "<input>",
                     const ConstantTable* constants = nullptr);

}  // namespace relax

#endif  // RELAX_PARSER_PARSER_H_
