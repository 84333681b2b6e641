# WebGPU in a real browser (issue 34): the driver and the browser's WebGPU as the webgpu target
# will use them. Chromium missing: a failure, or a skip with RELAX_TEST_WEBGPU=0.
add_test(NAME webgpu.browser_smoke
         COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/venv-python.sh
                 ${CMAKE_CURRENT_SOURCE_DIR}/webgpu/smoke.py)
set_tests_properties(webgpu.browser_smoke PROPERTIES TIMEOUT 300 LABELS webgpu
                     SKIP_RETURN_CODE 77)
# The WGSL printer's kernels in the browser: every kernel of the issue's models (PP-OCR cls, rec,
# det and MiniLM, compiled with --target webgpu) compiles with no error and no warning and makes
# a pipeline with the runtime's layout (kernels.py); node tests that compile to one kernel run it
# on their inputs and match ONNX's outputs (ops.py; CI runs a 15 % sample, RELAX_TEST_FULL=1
# every test: scripts/test_full.sh).
add_test(NAME webgpu.kernels.models
         COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/venv-python.sh
                 ${CMAKE_CURRENT_SOURCE_DIR}/webgpu/kernels.py --relaxc $<TARGET_FILE:relaxc>
                 cls rec det minilm)
set_tests_properties(webgpu.kernels.models PROPERTIES TIMEOUT 900 LABELS "webgpu;models"
                     SKIP_RETURN_CODE 77)
add_test(NAME webgpu.ops
         COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/venv-python.sh
                 ${CMAKE_CURRENT_SOURCE_DIR}/webgpu/ops.py --relaxc $<TARGET_FILE:relaxc>
                 --sample 0.15 --seed 1 --min-eligible 30)
set_tests_properties(webgpu.ops PROPERTIES TIMEOUT 900 LABELS webgpu SKIP_RETURN_CODE 77)
# Compiled models in the browser with the web runtime (build/web, the web_runtime target):
# PP-OCR cls/rec/det and MiniLM at two input sizes from one artifact each against onnxruntime
# (models.py); the OCR page (web/ocr.html) reading the main job's page (ocr_page.py); a sample
# of the node tests, static and dynamic, through the node-test harness in the browser
# (run_node_tests.py --target webgpu; expectations in test/onnx/expected_debian*_webgpu.txt).
if(RELAX_BUILD_WEB)
  foreach(group ocr minilm)
    set(models cls,rec,det)
    if(group STREQUAL "minilm")
      set(models minilm)
    endif()
    add_test(NAME webgpu.models.${group}
             COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/venv-python.sh
                     ${CMAKE_CURRENT_SOURCE_DIR}/webgpu/models.py --relaxc $<TARGET_FILE:relaxc>
                     --web ${RELAX_WEB_DIR} --models ${models})
    set_tests_properties(webgpu.models.${group} PROPERTIES TIMEOUT 900
                         LABELS "webgpu;models" SKIP_RETURN_CODE 77)
  endforeach()
  add_test(NAME webgpu.ocr_page
           COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/venv-python.sh
                   ${CMAKE_CURRENT_SOURCE_DIR}/webgpu/ocr_page.py --relaxc $<TARGET_FILE:relaxc>
                   --web ${RELAX_WEB_DIR})
  set_tests_properties(webgpu.ocr_page PROPERTIES TIMEOUT 900 LABELS "webgpu;models"
                       SKIP_RETURN_CODE 77)
  foreach(variant static dynamic)
    set(extra)
    if(variant STREQUAL "dynamic")
      set(extra --dynamic)
    endif()
    add_test(NAME webgpu.nodes.${variant}
             COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/venv-python.sh
                     ${PROJECT_SOURCE_DIR}/test/onnx/run_node_tests.py
                     --relaxc $<TARGET_FILE:relaxc> --web ${RELAX_WEB_DIR} --target webgpu
                     ${extra} --sample 0.2 --seed 1
                     --work ${CMAKE_BINARY_DIR}/test/onnx_webgpu_${variant})
    set_tests_properties(webgpu.nodes.${variant} PROPERTIES TIMEOUT 1200 LABELS "webgpu;onnx")
  endforeach()
endif()
if(RELAX_BUILD_WEB)
  # relax.js's errors (JS exceptions with relax-run's text) and the over-limit kernel refused.
  add_test(NAME webgpu.errors
           COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/venv-python.sh
                   ${CMAKE_CURRENT_SOURCE_DIR}/webgpu/errors.py --relaxc $<TARGET_FILE:relaxc>
                   --relax-run $<TARGET_FILE:relax-run> --web ${RELAX_WEB_DIR})
  set_tests_properties(webgpu.errors PROPERTIES TIMEOUT 300 LABELS webgpu SKIP_RETURN_CODE 77)
endif()
