# relaxc diff (issue 36). Included at the end of tests.cmake, which defines relax_cli_error,
# RELAXC and W (the cli_bad_inputs files).
# The three real models: no divergence as they are; the perturbed node named (on the classifier
# inside a fused conv kernel); the repro model reproduces it (diff_cases.py).
foreach(model cls det minilm)
  add_test(NAME cli.diff.${model}
           COMMAND bash ${RELAX_VENV_PYTHON} ${RELAX_CLI_TEST_DIR}/diff_cases.py
                   --relaxc ${RELAXC} --work ${W}/diff --only ${model})
  set_tests_properties(cli.diff.${model} PROPERTIES TIMEOUT 600 LABELS "cli;models")
endforeach()
# Errors: exit 1 (a file, onnxruntime absent), 2 (usage, a bad debug option).
relax_cli_error(diff.missing_model 1 "cannot open model file.*no_such\\.onnx"
                ${RELAXC} diff ${W}/no_such.onnx)
relax_cli_error(diff.not_onnx 1 "not_onnx\\.onnx.* is not a valid ONNX model"
                ${RELAXC} diff ${W}/not_onnx.onnx)
relax_cli_error(diff.onnxruntime_absent 1
                "relaxc diff: onnxruntime is not importable by '/usr/bin/python3'"
                ${CMAKE_COMMAND} -E env RELAX_PYTHON=/usr/bin/python3
                ${RELAXC} diff ${W}/not_onnx.onnx)
relax_cli_error(diff.unknown_node 1 "debug\\.perturb-node: the model has no node named 'nope'"
                ${RELAXC} diff ${W}/div_int.onnx --pass-option debug.perturb-node=nope)
relax_cli_error(diff.unknown_debug_option 2
                "unknown pass option 'debug\\.bogus' \\(debug options: debug\\.keep-node-values, debug\\.perturb-node\\)"
                ${RELAXC} diff ${W}/div_int.onnx --pass-option debug.bogus=1)
relax_cli_error(diff.bad_tolerance 2 "--rtol and --atol must be >= 0"
                ${RELAXC} diff ${W}/div_int.onnx --rtol -1)
