# Test backends (test/backends/<name>/: one folder each, registered by one line of
# test/backends/registry.cc): relaxc-test-backends is relaxc with them added. Each folder's
# tests.cmake, if any, adds its tests; check_isolated.py shows that no file outside a backend's
# folder names it but the registry.
file(GLOB RELAX_TEST_BACKEND_SRCS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/backends/*/*.cc)
add_executable(relaxc-test-backends ${RELAX_RELAXC_SRCS} ${RELAX_TEST_BACKEND_SRCS}
                                    ${CMAKE_CURRENT_SOURCE_DIR}/backends/registry.cc)
target_include_directories(relaxc-test-backends PRIVATE ${CLI11_INCLUDE_DIR})
target_include_directories(relaxc-test-backends SYSTEM PRIVATE ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
target_compile_options(relaxc-test-backends PRIVATE ${RELAX_WARNINGS})
target_link_libraries(relaxc-test-backends PRIVATE relax_compiler relax_runtime MLIRGPUDialect
                      MLIRArithDialect MLIRIR)
# What relaxc's own sources need (tools/CMakeLists.txt): JSON, the embedded Python peers.
target_link_libraries(relaxc-test-backends PRIVATE nlohmann_json::nlohmann_json relaxc_peer_scripts)
set_target_properties(relaxc-test-backends PROPERTIES ENABLE_EXPORTS ON)

add_test(NAME backends.isolated
         COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/backends/check_isolated.py ${PROJECT_SOURCE_DIR})
set_tests_properties(backends.isolated PROPERTIES TIMEOUT 60 LABELS backends)
file(GLOB RELAX_TEST_BACKEND_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/backends/*/tests.cmake)
foreach(f IN LISTS RELAX_TEST_BACKEND_TESTS)
  include(${f})
endforeach()
