# The embedding C API (include/relax/runtime/module_api.h, librelax_runtime.so) and, from Python,
# through python/relaxrt.py (an alias of the relaxc package, which compiles the C API into its
# runtime extension; the test venv imports the copy python.package.install made). A small ONNX model with symbolic dims (make_model.py) is compiled
# once by relaxc (fixture capi_artifact) for the gtest, which links only librelax_runtime.so.
set(RELAX_VENV_PYTHON ${PROJECT_SOURCE_DIR}/scripts/venv-python.sh)
set(RELAX_CAPI_WORK ${CMAKE_CURRENT_BINARY_DIR}/capi)
set(RELAX_CAPI_ARTIFACT ${RELAX_CAPI_WORK}/small.so)
# The same model for vulkan (device placement) beside it: ModuleApiDevice runs it on
# device-resident tensors.
set(RELAX_CAPI_VULKAN_ARTIFACT ${RELAX_CAPI_WORK}/small_vulkan.so)
# And defaults.so, a model with an optional input (an initializer that is also a graph input), for
# ModuleApiDefaults.
set(RELAX_CAPI_DEFAULTS_ARTIFACT ${RELAX_CAPI_WORK}/defaults.so)
add_test(NAME capi.compile
         COMMAND bash -c "mkdir -p '${RELAX_CAPI_WORK}' && bash '${RELAX_VENV_PYTHON}' '${CMAKE_CURRENT_SOURCE_DIR}/capi/make_model.py' '${RELAX_CAPI_WORK}/small.onnx' '${RELAX_CAPI_WORK}/defaults.onnx' && '$<TARGET_FILE:relaxc>' compile '${RELAX_CAPI_WORK}/small.onnx' -o '${RELAX_CAPI_ARTIFACT}' && '$<TARGET_FILE:relaxc>' compile '${RELAX_CAPI_WORK}/small.onnx' --target vulkan -o '${RELAX_CAPI_VULKAN_ARTIFACT}' && '$<TARGET_FILE:relaxc>' compile '${RELAX_CAPI_WORK}/defaults.onnx' -o '${RELAX_CAPI_DEFAULTS_ARTIFACT}'")
set_tests_properties(capi.compile PROPERTIES FIXTURES_SETUP capi_artifact TIMEOUT 300 LABELS unit)
add_executable(relax_module_api_tests ${CMAKE_CURRENT_SOURCE_DIR}/capi/module_api_test.cc
               ${CMAKE_CURRENT_SOURCE_DIR}/capi/module_api_defaults_test.cc)
target_link_libraries(relax_module_api_tests PRIVATE relax_runtime_shared dlpack::dlpack
                      GTest::gtest_main)
target_compile_options(relax_module_api_tests PRIVATE ${RELAX_WARNINGS})
gtest_discover_tests(relax_module_api_tests TEST_PREFIX capi. DISCOVERY_TIMEOUT 60
                     PROPERTIES ENVIRONMENT RELAX_CAPI_ARTIFACT=${RELAX_CAPI_ARTIFACT}
                                FIXTURES_REQUIRED capi_artifact LABELS unit)

add_test(NAME cli.relaxrt.python
         COMMAND bash ${RELAX_VENV_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/capi/relaxrt_test.py
                 --relaxc $<TARGET_FILE:relaxc> --lib $<TARGET_FILE:relax_runtime_shared>
                 --work ${RELAX_CAPI_WORK}/relaxrt)
set_tests_properties(cli.relaxrt.python PROPERTIES TIMEOUT 300 LABELS cli
                     FIXTURES_REQUIRED python_package
                     ENVIRONMENT PYTHONPATH=${CMAKE_BINARY_DIR}/python-pkg/site)
