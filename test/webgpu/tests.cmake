# WebGPU in a real browser (issue 34): the driver and the browser's WebGPU as the webgpu target
# will use them. Chromium missing: a failure, or a skip with RELAX_TEST_WEBGPU=0.
add_test(NAME webgpu.browser_smoke
         COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/venv-python.sh
                 ${CMAKE_CURRENT_SOURCE_DIR}/webgpu/smoke.py)
set_tests_properties(webgpu.browser_smoke PROPERTIES TIMEOUT 300 LABELS webgpu
                     SKIP_RETURN_CODE 77)
