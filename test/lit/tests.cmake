# lit + FileCheck tests of the text IR (test/lit): one ctest test running the whole suite.
find_program(RELAX_LIT NAMES lit lit.py HINTS /usr/lib/llvm-22/bin /usr/lib/llvm-22/build/utils/lit)
if(RELAX_LIT)
  add_test(NAME lit
           COMMAND ${RELAX_LIT} -v ${CMAKE_CURRENT_SOURCE_DIR}/lit
                   --param relax_tools_dir=$<TARGET_FILE_DIR:relax-opt>
                   --param llvm_tools_dir=/usr/lib/llvm-22/bin
                   --param exec_root=${CMAKE_CURRENT_BINARY_DIR}/lit-out)
  set_tests_properties(lit PROPERTIES LABELS lit TIMEOUT 300)
else()
  message(FATAL_ERROR "lit not found (install llvm-22-tools: bash scripts/setup.sh)")
endif()
