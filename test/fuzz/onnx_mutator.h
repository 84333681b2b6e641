// The structured ONNX model mutator shared by the libFuzzer targets that take model bytes
// (onnx_importer_fuzzer: import only; compile_fuzzer: import -> passes -> codegen) and by
// onnx-mutate, which writes mutated models for the end-to-end run (relaxc compile + relax-run).
// See test/fuzz/README.md for the edits it makes.
#ifndef RELAX_TEST_FUZZ_ONNX_MUTATOR_H_
#define RELAX_TEST_FUZZ_ONNX_MUTATOR_H_

#include <cstddef>
#include <cstdint>
#include <string>

// libFuzzer's byte-level mutator; onnx-mutate defines its own.
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace relax_fuzz {

/// Creates a temporary folder holding one 4 KiB "weights.bin" for external-data edits and
/// returns its path (the model folder the importer is given).
std::string MakeModelDir();

/// LLVMFuzzerInitialize of a model fuzzer: MakeModelDir(), and `report` (the fuzzer's counts)
/// printed at exit. Returns the model folder.
std::string InitModelFuzzer(void (*report)());

/// Remembers an input that reached op conversion: later mutations of inputs that did not
/// start, most of the time, from one of these.
void RememberConverting(const uint8_t* data, size_t size);

/// LLVMFuzzerCustomMutator: one to two model-level edits of `data` (in place, capacity
/// max_size); returns the new size.
size_t Mutate(uint8_t* data, size_t size, size_t max_size, unsigned int seed);

/// LLVMFuzzerCustomCrossOver: a node of the second model appended to the first, rewired.
size_t CrossOver(const uint8_t* data1, size_t size1, const uint8_t* data2, size_t size2,
                 uint8_t* out, size_t max_out_size, unsigned int seed);

}  // namespace relax_fuzz

#endif  // RELAX_TEST_FUZZ_ONNX_MUTATOR_H_
