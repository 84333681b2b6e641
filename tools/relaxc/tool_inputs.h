// The inputs of an artifact's entry function for the tools that run one (`run`, `bench`, `diff`):
// --input files checked against the signature, and generated inputs of the signature's dtypes
// and shapes for those not given. Compiled into relax-run too: runtime and VM headers only.
#ifndef RELAX_TOOLS_RELAXC_TOOL_INPUTS_H_
#define RELAX_TOOLS_RELAXC_TOOL_INPUTS_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "relax/runtime/executable.h"
#include "relax/vm/vm.h"

namespace relax::tools {

/// The input options of a subcommand (AddInputOptions).
struct InputSpec {
  std::vector<std::string> files;  // "NAME=FILE.npy", or NAME=DIR for a sequence (--input)
  std::vector<std::string> dims;   // "NAME=VALUE" for symbolic dims (--dim; comma lists ok)
  uint64_t seed = 0;               // --seed: the generated inputs' random stream
};

/// The --input specs by input name, checked against `sig`. Errors (relax::Error): "bad --input
/// 'S': expected NAME=FILE.npy", "unknown input 'N' (expected inputs: x, b (optional))", "input
/// 'N' given more than once".
std::map<std::string, std::string> ParseInputFiles(const std::vector<runtime::TensorSig>& sig,
                                                   const std::vector<std::string>& specs);

/// The value of input `s` from `path`: a .npy file (runtime::LoadNpy), or for a sequence input a
/// directory of 0.npy, 1.npy, ... (consecutive from 0; an empty directory is an empty sequence),
/// a Tuple of its tensors. Throws relax::Error naming the input or the file.
runtime::Value LoadInputFile(const runtime::TensorSig& s, const std::string& path);

/// One value per signature input, in signature order:
///   - the --input file (ParseInputFiles, LoadInputFile);
///   - else, for an optional input (default_constant >= 0), a null Value: the VM takes the
///     input's default;
///   - else generated data of the input's dtype and shape. A symbolic dim takes its --dim value,
///     else its size in an input given with --input that has it (the first such dim in
///     signature order), else 1. Values come from a 64-bit Mersenne twister seeded with
///     spec.seed, drawn input by input in signature order (the same seed gives the same
///     tensors): float32/float64/float16/bfloat16 uniform in [-1, 1); integers 0 or 1
///     (valid token ids, token types, masks and indices of any model); bool 0 or 1;
///     float8 formats and any other dtype zero.
/// Errors (relax::Error, naming the input or dim): those of ParseInputFiles and LoadInputFile;
/// a --dim that is not NAME=VALUE with VALUE an integer in [0, 2^31), a --dim given twice, a
/// --dim name no input has ("unknown symbolic dim 'n' in --dim (symbolic dims: batch, seq)");
/// a sequence input without --input ("input 's' is a sequence: give it with --input s=DIR");
/// a generated input of over 2^30 elements.
std::vector<runtime::Value> PrepareInputs(const std::vector<runtime::TensorSig>& sig,
                                          const InputSpec& spec);

/// For messages after a failed run: "" when PrepareInputs gave every symbolic dim a size from
/// --dim or an --input file, else a note naming the dims that took the size 1 ("symbolic dims
/// not given with --dim took the size 1: x_d0, x_d2; give sizes with --dim NAME=VALUE").
std::string DefaultedDimsNote(const std::vector<runtime::TensorSig>& sig, const InputSpec& spec);

/// Writes the prepared `values` (PrepareInputs) for a peer program: tensor input i as
/// DIR/<i>.npy (runtime::SaveNpy), a sequence input as the directory DIR/<i>/ of 0.npy, 1.npy,
/// ...; returns NAME=PATH pairs in signature order. Optional inputs left null are skipped.
/// `dir` (inside a TempDir) is created when missing; an existing one must be a real directory
/// (a symlink there is refused). Throws relax::Error on a write error.
std::vector<std::pair<std::string, std::string>> SaveInputs(
    const std::string& dir, const std::vector<runtime::TensorSig>& sig,
    const std::vector<runtime::Value>& values);

/// Adds --input/-i NAME=FILE.npy (repeatable), --dim NAME=VALUE (repeatable, comma lists) and
/// --seed N to `cmd`, storing into `spec` (which must outlive the parse).
void AddInputOptions(CLI::App& cmd, InputSpec& spec);

}  // namespace relax::tools

#endif  // RELAX_TOOLS_RELAXC_TOOL_INPUTS_H_
