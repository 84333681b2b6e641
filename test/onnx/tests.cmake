# ONNX backend node-test conformance tier: every node test of Debian's libonnx-testdata (932),
# checked against test/onnx/expected.txt (which lists every test that does not pass).
# Fails when any test's status differs from the expectations, and always on a crash; see
# test/onnx/run_node_tests.py. Results land in ${CMAKE_CURRENT_BINARY_DIR}/onnx/results.json.
set(RELAX_VENV_PYTHON ${PROJECT_SOURCE_DIR}/scripts/venv-python.sh)
add_test(NAME onnx.node_tests
         COMMAND bash ${RELAX_VENV_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/onnx/run_node_tests.py
                 --relaxc $<TARGET_FILE:relaxc> --src ${PROJECT_SOURCE_DIR}
                 --expected ${CMAKE_CURRENT_SOURCE_DIR}/onnx/expected.txt
                 --work ${CMAKE_CURRENT_BINARY_DIR}/onnx --jobs 2 --timeout 60)
set_tests_properties(onnx.node_tests PROPERTIES TIMEOUT 1800 LABELS onnx PROCESSORS 2)
# The same for the node tests shipped in the pinned onnx wheel (scripts/requirements.txt), checked
# against test/onnx/expected_pypi.txt.
add_test(NAME onnx.node_tests_pypi
         COMMAND bash ${RELAX_VENV_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/onnx/run_node_tests.py
                 --suite pypi --relaxc $<TARGET_FILE:relaxc> --src ${PROJECT_SOURCE_DIR}
                 --work ${CMAKE_CURRENT_BINARY_DIR}/onnx_pypi --jobs 2 --timeout 60)
set_tests_properties(onnx.node_tests_pypi PROPERTIES TIMEOUT 1200 LABELS onnx PROCESSORS 2)

# Debian libonnx-testdata's other collections: `simple` (small models), `pytorch-converted`
# (PyTorch modules, opsets 6-9) and `pytorch-operator` (single PyTorch operators), each against
# its own expectations file (expected_simple.txt, expected_pytorch_*.txt).
foreach(suite simple pytorch-converted pytorch-operator)
  add_test(NAME onnx.node_tests_${suite}
           COMMAND bash ${RELAX_VENV_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/onnx/run_node_tests.py
                   --suite ${suite} --relaxc $<TARGET_FILE:relaxc> --src ${PROJECT_SOURCE_DIR}
                   --work ${CMAKE_CURRENT_BINARY_DIR}/onnx_${suite} --jobs 2 --timeout 60)
  set_tests_properties(onnx.node_tests_${suite} PROPERTIES TIMEOUT 600 LABELS onnx PROCESSORS 2)
endforeach()

# The dynamic variant (every input dim > 1 symbolic) of the tests each suite passes static, checked
# against expected_dynamic.txt / expected_pypi_dynamic.txt. CI runs a seeded 20 % sample;
# scripts/test_full.sh (RELAX_TEST_FULL=1) runs all of them.
foreach(suite debian pypi)
  set(tag "")
  if(suite STREQUAL "pypi")
    set(tag "_pypi")
  endif()
  add_test(NAME onnx.node_tests${tag}_dynamic
           COMMAND bash ${RELAX_VENV_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/onnx/run_node_tests.py
                   --suite ${suite} --dynamic --sample 0.2 --seed 1 --relaxc $<TARGET_FILE:relaxc>
                   --src ${PROJECT_SOURCE_DIR} --work ${CMAKE_CURRENT_BINARY_DIR}/onnx${tag}_dynamic
                   --jobs 2 --timeout 60)
  set_tests_properties(onnx.node_tests${tag}_dynamic PROPERTIES TIMEOUT 1200 LABELS onnx PROCESSORS 2)
endforeach()

# relaxc vs onnxruntime on small models of the nn op families with constant parameters (attribute
# and mode combinations, symbolic dims at two sizes) and their error messages; one test per family
# (test/onnx/nn_cases.py).
foreach(family attention conv errors matmul norm pool reduce resize)
  add_test(NAME onnx.nn_cases.${family}
           COMMAND bash ${RELAX_VENV_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/onnx/nn_cases.py
                   --relaxc $<TARGET_FILE:relaxc>
                   --work ${CMAKE_CURRENT_BINARY_DIR}/onnx_nn_cases ${family})
  set_tests_properties(onnx.nn_cases.${family} PROPERTIES TIMEOUT 600 LABELS onnx)
endforeach()

# relaxc vs onnxruntime 1.32 on the numerics edge cases (ceil-mode pooling windows, exclusive /
# reverse CumSum, integer matmuls with zero points, float Range lengths, trig of large arguments,
# fmod of far-apart magnitudes); test/onnx/edge_cases.py.
add_test(NAME onnx.edge_cases
         COMMAND bash ${RELAX_VENV_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/onnx/edge_cases.py
                 --relaxc $<TARGET_FILE:relaxc> --work ${CMAKE_CURRENT_BINARY_DIR}/onnx_edge_cases)
set_tests_properties(onnx.edge_cases PROPERTIES TIMEOUT 600 LABELS onnx)
# relaxc vs onnxruntime 1.32 on single-node models of the com.microsoft contrib ops that
# onnxruntime's transformers optimizer and saved ORT_ENABLE_ALL graphs write (attention ops,
# fused norms and Gelus, embeddings, rotary, FusedConv / FusedMatMul / NhwcConv) and their
# errors; test/onnx/contrib_transformer_cases.py.
add_test(NAME onnx.contrib_transformer_cases
         COMMAND bash ${RELAX_VENV_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/onnx/contrib_transformer_cases.py
                 --relaxc $<TARGET_FILE:relaxc>
                 --work ${CMAKE_CURRENT_BINARY_DIR}/onnx_contrib_transformer_cases)
set_tests_properties(onnx.contrib_transformer_cases PROPERTIES TIMEOUT 600 LABELS onnx)
# relaxc vs onnxruntime 1.32 on single-node models of the com.microsoft quantized ops that
# onnxruntime's quantization tools write (QLinearAdd / Mul / Sigmoid / LeakyRelu /
# GlobalAveragePool / Concat, QGemm, DynamicQuantizeMatMul, MatMulIntegerToFloat,
# DynamicQuantizeLSTM, QAttention, QEmbedLayerNormalization, MatMulNBits) and their errors;
# test/onnx/contrib_quant_cases.py.
add_test(NAME onnx.contrib_quant_cases
         COMMAND bash ${RELAX_VENV_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/onnx/contrib_quant_cases.py
                 --relaxc $<TARGET_FILE:relaxc>
                 --work ${CMAKE_CURRENT_BINARY_DIR}/onnx_contrib_quant_cases)
set_tests_properties(onnx.contrib_quant_cases PROPERTIES TIMEOUT 600 LABELS onnx)
# NaN, infinities and signed zeros through every float elementwise op on the vulkan target
# (lavapipe): the same results as onnxruntime and the cpu target (edge_cases.py special_values);
# sin/cos/tan of large arguments within 4 ulp and fmod exact there too (math_edge, math_ulp).
add_test(NAME onnx.special_values_vulkan
         COMMAND bash ${RELAX_VENV_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/onnx/edge_cases.py
                 --relaxc $<TARGET_FILE:relaxc> --target vulkan
                 --work ${CMAKE_CURRENT_BINARY_DIR}/onnx_special_values_vulkan special_values math_edge math_ulp)
set_tests_properties(onnx.special_values_vulkan PROPERTIES TIMEOUT 600 LABELS "onnx;gpu")

# relaxc vs onnxruntime on LSTM / GRU / RNN variants the node tests leave out (bidirectional with
# sequence_lens, layout=1, symbolic batch and sequence at several sizes, activations with
# alpha/beta, clip, omitted outputs); test/onnx/rnn_cases.py.
add_test(NAME onnx.rnn_cases
         COMMAND bash ${RELAX_VENV_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/onnx/rnn_cases.py
                 --relaxc $<TARGET_FILE:relaxc> --work ${CMAKE_CURRENT_BINARY_DIR}/onnx_rnn_cases)
set_tests_properties(onnx.rnn_cases PROPERTIES TIMEOUT 600 LABELS onnx)

# The vulkan target (runs on this machine's Vulkan driver, Mesa lavapipe): the Debian tests the
# static cpu variant passes, compiled with --target vulkan, against expected_debian_vulkan.txt
# (cpu-pass / vulkan-fail tests with reasons). CI runs a seeded 20 % sample; scripts/test_full.sh
# (RELAX_TEST_FULL=1) runs all of them.
add_test(NAME onnx.node_tests_vulkan
         COMMAND bash ${RELAX_VENV_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/onnx/run_node_tests.py
                 --target vulkan --sample 0.2 --seed 1 --relaxc $<TARGET_FILE:relaxc>
                 --src ${PROJECT_SOURCE_DIR} --work ${CMAKE_CURRENT_BINARY_DIR}/onnx_vulkan
                 --jobs 2 --timeout 120)
set_tests_properties(onnx.node_tests_vulkan PROPERTIES TIMEOUT 1800 LABELS "onnx;gpu" PROCESSORS 2)

# Differential fuzzer (test/fuzz/diff_fuzz, issue 33): random valid ONNX graphs through relaxc and
# onnxruntime 1.32 for 150 s from a fixed seed, onnx.reference judging where they differ. Fails on
# a mismatch, a relaxc crash or a timeout (onnxruntime off-spec results and unsupported ops are
# reported only); repros land in fuzz_differential/repros. The 1-hour run: test/fuzz/README.md.
add_test(NAME fuzz.differential
         COMMAND bash ${RELAX_VENV_PYTHON} ${PROJECT_SOURCE_DIR}/test/fuzz/diff_fuzz/diff_fuzz.py
                 --relaxc $<TARGET_FILE:relaxc> --seed 1 --seconds 150 --minimize-seconds 30
                 --work ${CMAKE_CURRENT_BINARY_DIR}/fuzz_differential
                 --repro-dir ${CMAKE_CURRENT_BINARY_DIR}/fuzz_differential/repros
                 --report ${CMAKE_CURRENT_BINARY_DIR}/fuzz_differential/report.json)
set_tests_properties(fuzz.differential PROPERTIES TIMEOUT 600 LABELS fuzz)
