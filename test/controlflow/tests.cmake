# Control-flow and data-dependent-shape tests: text-IR modules compiled by relaxc, run by
# relax-run, compared with a Python/numpy reference (run_case.py).
set(RELAX_CF_DIR ${CMAKE_CURRENT_SOURCE_DIR}/controlflow)
set(RELAX_CF_WORK ${CMAKE_CURRENT_BINARY_DIR}/controlflow)
function(relax_cf_case case arg)
  add_test(NAME controlflow.${case}_${arg}
           COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/venv-python.sh ${RELAX_CF_DIR}/run_case.py
                   --relaxc $<TARGET_FILE:relaxc> --relax-run $<TARGET_FILE:relax-run>
                   --work ${RELAX_CF_WORK}/${case}_${arg} ${case} ${arg})
  set_tests_properties(controlflow.${case}_${arg} PROPERTIES TIMEOUT 300 LABELS controlflow)
endfunction()
# The loop at 0, 1 and 100,000 iterations (carried tensor changes shape every iteration).
relax_cf_case(loop 0)
relax_cf_case(loop 1)
relax_cf_case(loop 7)
relax_cf_case(loop 100000)
# A callee-allocated tensor of data-dependent shape consumed by shape-generic kernels.
relax_cf_case(nonzero 0)
relax_cf_case(nonzero 3)
# call_tir writing a tuple of two outputs.
relax_cf_case(tuple 1)
relax_cf_case(tuple 1000)
# ONNX If / Loop / Scan imported as Relax control flow, compared with onnxruntime
# (onnx_cases.py): run-time trip counts and conditions, outer-scope reads, growing shapes.
foreach(case loop_scan loop_grow loop_while loop_long if_shapes scan_reverse error_body unsupported_body
             ir_loop if_rank if_rank_gemm)
  add_test(NAME controlflow.onnx_${case}
           COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/venv-python.sh ${RELAX_CF_DIR}/onnx_cases.py
                   --relaxc $<TARGET_FILE:relaxc> --work ${RELAX_CF_WORK}/onnx_${case} ${case})
  set_tests_properties(controlflow.onnx_${case} PROPERTIES TIMEOUT 300 LABELS controlflow)
endforeach()
