// libFuzzer's custom mutator and crossover hooks of the fuzzers that take ONNX model bytes
// (onnx_importer_fuzzer, compile_fuzzer): the structured edits of onnx_mutator.h.
#include <cstddef>
#include <cstdint>

#include "onnx_mutator.h"

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  return relax_fuzz::Mutate(data, size, max_size, seed);
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* data1, size_t size1,
                                            const uint8_t* data2, size_t size2, uint8_t* out,
                                            size_t max_out_size, unsigned int seed) {
  return relax_fuzz::CrossOver(data1, size1, data2, size2, out, max_out_size, seed);
}
