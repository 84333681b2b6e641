# The whole-compiler fuzzer (compile_fuzzer.cc), built only in a RELAX_SANITIZE build (build/san,
# configured by the main build): libFuzzer on top of the ASan+UBSan instrumentation every
# target of that build has. Uninstrumented: LLVM/MLIR, protobuf, libonnx.
add_executable(compile_fuzzer ${CMAKE_SOURCE_DIR}/test/fuzz/compile_fuzzer.cc
                              ${CMAKE_SOURCE_DIR}/test/fuzz/onnx_mutator.cc
                              ${CMAKE_SOURCE_DIR}/test/fuzz/onnx_fuzz_hooks.cc)
target_compile_options(compile_fuzzer PRIVATE -fsanitize=fuzzer ${RELAX_WARNINGS})
target_link_options(compile_fuzzer PRIVATE -fsanitize=fuzzer)
target_link_libraries(compile_fuzzer PRIVATE relax_compiler onnx onnx_proto
                      protobuf::libprotobuf)
