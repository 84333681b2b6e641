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
set_tests_properties(onnx.node_tests PROPERTIES TIMEOUT 900 LABELS onnx PROCESSORS 2)
# The same for the node tests shipped in the pinned onnx wheel (scripts/requirements.txt), checked
# against test/onnx/expected_pypi.txt.
add_test(NAME onnx.node_tests_pypi
         COMMAND bash ${RELAX_VENV_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/onnx/run_node_tests.py
                 --suite pypi --relaxc $<TARGET_FILE:relaxc> --src ${PROJECT_SOURCE_DIR}
                 --work ${CMAKE_CURRENT_BINARY_DIR}/onnx_pypi --jobs 2 --timeout 60)
set_tests_properties(onnx.node_tests_pypi PROPERTIES TIMEOUT 1200 LABELS onnx PROCESSORS 2)

# relaxc vs onnxruntime on small models of the nn op families with constant parameters (attribute
# and mode combinations, symbolic dims at two sizes) and their error messages; one test per family
# (test/onnx/nn_cases.py).
foreach(family conv errors matmul norm pool reduce resize)
  add_test(NAME onnx.nn_cases.${family}
           COMMAND bash ${RELAX_VENV_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/onnx/nn_cases.py
                   --relaxc $<TARGET_FILE:relaxc>
                   --work ${CMAKE_CURRENT_BINARY_DIR}/onnx_nn_cases ${family})
  set_tests_properties(onnx.nn_cases.${family} PROPERTIES TIMEOUT 600 LABELS onnx)
endforeach()
