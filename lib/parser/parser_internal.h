// Shared state and helpers of the text IR parser (parser.cc: module and Relax
// level; parser_tir.cc: PrimExpr and TIR level).
#ifndef RELAX_PARSER_PARSER_INTERNAL_H_
#define RELAX_PARSER_PARSER_INTERNAL_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "lexer.h"
#include "relax/parser/parser.h"
#include "relax/transform/block_builder.h"

namespace relax::text {

class Parser {
 public:
  Parser(std::string filename, const std::string& src, const ConstantTable* constants);
  IRModule ParseModule();

 private:
  // ---- tokens and errors (parser.cc) ----
  const Token& Peek(size_t k = 0) const;
  const Token& Next();
  bool IsPunct(const char* p, size_t k = 0) const;
  bool IsIdent(const char* kw, size_t k = 0) const;
  bool AcceptPunct(const char* p);
  bool AcceptIdent(const char* kw);
  void ExpectPunct(const char* p);
  void ExpectIdent(const char* kw);
  std::string ExpectName(const char* what);  // any identifier
  [[noreturn]] void Fail(const Token& at, const std::string& msg) const;
  [[noreturn]] void Expected(const std::string& what) const;
  DataType ParseDType();
  int64_t ParseSignedInt(const char* what);
  /// Guards recursion depth (deeply nested input must not overflow the stack).
  struct DepthGuard {
    explicit DepthGuard(Parser* p);
    ~DepthGuard() { --p->depth_; }
    Parser* p;
  };

  // ---- Relax level (parser.cc) ----
  void ParseModuleAttrs(IRModule* mod);
  // `{key = "value", ...}` (the opening brace not yet consumed) into `out`.
  void ParseStringAttrs(std::map<std::string, std::string>* out);
  Expr ParseFunction(std::string* name);
  Expr ParseSeq();  // bindings ... return expr
  void ParseBinding(bool in_dataflow, BindingBlock* block);
  Expr ParseExpr();
  Expr ParsePrimaryExpr();
  Expr ParseConstant();
  Expr ParseBranch();
  void ParseCallSuffix(std::vector<Expr>* args, std::vector<StructInfo>* sinfo_args, Attrs* attrs);
  bool AtAttrs() const;
  Attrs ParseAttrs();
  AttrValue ParseAttrValue();
  StructInfo ParseSInfo();
  std::vector<PrimExpr> ParseDimList();
  /// StructInfo of a parsed value: op calls by the registry's inference.
  Expr NormalizeValue(const Expr& e, const Token& at, const StructInfo& annotated);
  VarRef LookupRelaxVar(const Token& t);

  // ---- PrimExpr and TIR level (parser_tir.cc) ----
  PrimExpr ParsePrimExpr();
  PrimExpr ParseBinaryRHS(int min_prec, PrimExpr lhs);
  PrimExpr ParseUnary();
  PrimExpr ParsePrimaryPrim();
  PrimExpr ParseNumber(bool negative);
  std::vector<PrimExpr> ParsePrimArgs();
  PrimExpr ResolvePrimVar(const Token& t);
  Buffer LookupBuffer(const Token& t);
  // `name[i, j, ...]` at the current position: the buffer and its indices.
  std::pair<Buffer, std::vector<PrimExpr>> ParseBufferAccess();
  tir::PrimFunc ParsePrimFunc(std::string* name);
  Buffer ParseBufferType(const std::string& name, std::vector<PrimExpr>* nd_shape, bool* has_nd,
                         bool allow_scope);
  tir::Stmt ParseStmtBlock();  // { stmts }
  tir::Stmt ParseStmt();

  std::string filename_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  int depth_ = 0;
  // Binary operators in the scalar expression being parsed: a left-associative chain
  // (a + b + c ...) nests one level per operator without any parentheses, so this
  // bounds the tree depth that printing and passes recurse over.
  int expr_ops_ = 0;
  bool in_prim_expr_ = false;
  const ConstantTable* constants_;
  IRModule* mod_ = nullptr;

  // Symbolic / TIR scalar vars: a stack of scopes (innermost last).
  std::vector<std::map<std::string, PrimExpr>> prim_scopes_;
  bool define_prim_vars_ = false;  // unknown names define new i64 vars (params, match_cast)
  std::vector<std::map<std::string, Buffer>> buffer_scopes_;

  // Relax vars of the current function.
  std::map<std::string, VarRef> rvars_;
  std::set<std::string> closed_dataflow_;  // dataflow vars whose block has ended
  BlockBuilder* bb_ = nullptr;
  std::vector<std::pair<std::string, Token>> global_refs_;  // checked at the end
};

}  // namespace relax::text

#endif  // RELAX_PARSER_PARSER_INTERNAL_H_
