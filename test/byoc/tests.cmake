# BYOC plugins (label byoc; docs/byoc.md). The example plugin is checked the way a vendor uses
# it: relaxc installed into a clean prefix (then moved), the plugin's folder built out of tree
# against it, the classifier compiled with --plugin and run (example_plugin_test.py). Two small
# plugins that fail on purpose (bad_plugin.c) check the errors naming the plugin.
set(RELAX_VENV_PYTHON ${PROJECT_SOURCE_DIR}/scripts/venv-python.sh)
set(RELAX_BYOC_WORK ${CMAKE_CURRENT_BINARY_DIR}/byoc)
set(RELAX_BYOC_EXAMPLE ${RELAX_VENV_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/byoc/example_plugin_test.py
    --build-dir ${CMAKE_BINARY_DIR} --plugin-dir ${PROJECT_SOURCE_DIR}/backends/plugins/example
    --work ${RELAX_BYOC_WORK}/example --cmake ${CMAKE_COMMAND})
add_test(NAME byoc.example.sdk COMMAND bash ${RELAX_BYOC_EXAMPLE} sdk)
set_tests_properties(byoc.example.sdk PROPERTIES FIXTURES_SETUP byoc_example TIMEOUT 300
                     LABELS byoc)
add_test(NAME byoc.example.classifier COMMAND bash ${RELAX_BYOC_EXAMPLE} classifier)
add_test(NAME byoc.example.no_compiler COMMAND bash ${RELAX_BYOC_EXAMPLE} no-compiler)
set_tests_properties(byoc.example.classifier byoc.example.no_compiler PROPERTIES
                     FIXTURES_REQUIRED byoc_example TIMEOUT 600 LABELS byoc)
# The no-compiler case writes its small model in the same folder: not at the same time.
set_tests_properties(byoc.example.no_compiler PROPERTIES DEPENDS byoc.example.classifier)

add_test(NAME byoc.model
         COMMAND bash ${RELAX_VENV_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/byoc/make_conv_relu.py
                 ${RELAX_BYOC_WORK}/conv_relu.onnx)
set_tests_properties(byoc.model PROPERTIES FIXTURES_SETUP byoc_model TIMEOUT 120 LABELS byoc)
set(RELAX_BYOC_BAD_abi_REGEX "bad_abi.*ABI|ABI.*bad_abi")
set(RELAX_BYOC_BAD_codegen_REGEX "plugin 'bad_codegen'.*region 'bad_codegen_region[_0-9]*'.*refuses every region")
foreach(kind abi codegen)
  string(TOUPPER ${kind} upper)
  add_library(relax_test_plugin_bad_${kind} MODULE ${CMAKE_CURRENT_SOURCE_DIR}/byoc/bad_plugin.c)
  target_compile_definitions(relax_test_plugin_bad_${kind} PRIVATE BAD_${upper})
  target_compile_options(relax_test_plugin_bad_${kind} PRIVATE ${RELAX_WARNINGS})
  add_test(NAME byoc.bad_${kind}
           COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/cli/expect_error.py
                   --regex "${RELAX_BYOC_BAD_${kind}_REGEX}" -- $<TARGET_FILE:relaxc> compile
                   ${RELAX_BYOC_WORK}/conv_relu.onnx -o ${RELAX_BYOC_WORK}/bad_${kind}.so
                   --plugin $<TARGET_FILE:relax_test_plugin_bad_${kind}>)
  set_tests_properties(byoc.bad_${kind} PROPERTIES FIXTURES_REQUIRED byoc_model TIMEOUT 120
                       LABELS byoc)
endforeach()
