# BYOC plugins (label byoc; docs/byoc.md). The example plugin is checked the way a vendor uses
# it: relaxc installed into a clean prefix (then moved), the plugin's folder built out of tree
# against it, the classifier compiled with --plugin and run (example_plugin_test.py). Plugins
# that fail to load or whose codegen fails in general: cli.byoc.plugin_errors (test/cli).
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
