// IRModule: one module holding graph-level Relax functions, loop-level
// PrimFuncs and extern symbols, each reachable by global name.
#ifndef RELAX_IR_MODULE_H_
#define RELAX_IR_MODULE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "relax/ir/expr.h"
#include "relax/ir/tir.h"

namespace relax {

/// Code a BYOC plugin produced for one region (the run-codegen pass): an object linked into the
/// artifact's kernel library and/or a runtime library the loader opens. Binary, so not part of
/// the text form (the printed module shows the extern calls that use it).
struct ExternModule {
  std::string plugin;    // "dnnl"
  std::string region;    // the region function it came from ("dnnl_region_0")
  std::string function;  // the runtime function (RelaxPackedFunc) that runs the region
  std::string object;    // ELF relocatable object bytes; may be empty
  std::string library;   // shared library defining `function`; may be empty
  bool device = false;   // `function` takes its tensors on the target's device (place-devices)
};

/// Global name -> function. Names are unique across Relax and TIR functions.
/// Iteration order is insertion order (printing is deterministic).
struct IRModule {
  std::vector<std::string> order;
  std::map<std::string, Expr> functions;            // FunctionNode
  std::map<std::string, tir::PrimFunc> prim_funcs;  // PrimFuncNode
  std::map<std::string, std::string> attrs;
  /// What run-codegen produced, in region order.
  std::vector<ExternModule> extern_modules;
  /// FreshName's next suffix per hint (a cache: names stay unique without rescanning).
  mutable std::map<std::string, int> next_suffix;

  void AddFunction(const std::string& name, Expr fn);
  void AddPrimFunc(const std::string& name, tir::PrimFunc fn);
  /// A name not used yet, derived from `hint` ("conv2d", "conv2d_1", ...).
  std::string FreshName(const std::string& hint) const;
  const FunctionNode* GetFunction(const std::string& name) const;
};

/// Text form of the whole module (see docs/ir.md for the syntax).
std::string ToString(const IRModule& m);
/// Text form of one Relax expression / function body.
std::string ToString(const Expr& e);

}  // namespace relax

#endif  // RELAX_IR_MODULE_H_
