# compile_repeat (compile_repeat.cc): repeated compiles through the compiler library in one
# process; built in the main build (the RSS check) and in the ASan build (build/san: the
# LeakSanitizer check), see test/driver/tests.cmake.
add_executable(compile_repeat ${CMAKE_SOURCE_DIR}/test/driver/compile_repeat.cc)
target_compile_options(compile_repeat PRIVATE ${RELAX_WARNINGS})
target_link_libraries(compile_repeat PRIVATE relax_compiler)
# The models it compiles in the tests: convolution, recurrent, control flow, normalization.
set(RELAX_REPEAT_MODELS)
foreach(t test_conv_with_strides_padding test_lstm_with_peepholes test_loop11 test_if
          test_gru_seq_length test_scan9_sum test_layer_normalization_4d_axis0)
  list(APPEND RELAX_REPEAT_MODELS /usr/share/libonnx-testdata/data/node/${t}/model.onnx)
endforeach()
