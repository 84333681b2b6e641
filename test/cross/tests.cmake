# Cross-target tests (issue 31): host code for another triple, built here and run under qemu.
# cross.aarch64.runtime cross-builds relax-run for AArch64 (scripts/build_aarch64_runtime.sh,
# clang-22 + Debian's arm64 cross libraries; about 20 s); cross.aarch64.models compiles PP-OCR
# cls/det/rec and MiniLM with -mtriple=aarch64-linux-gnu, runs each at two sizes under
# qemu-aarch64 and compares with onnxruntime here (about 25 s on 2 cores); cross.aarch64.foreign
# gives each relax-run the other triple's artifact (an `error:` naming both triples).
set(RELAX_AARCH64_DIR ${CMAKE_CURRENT_BINARY_DIR}/aarch64)
set(RELAX_CROSS_TEST_DIR ${CMAKE_CURRENT_SOURCE_DIR}/cross)
add_test(NAME cross.aarch64.runtime
         COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/build_aarch64_runtime.sh ${RELAX_AARCH64_DIR})
set_tests_properties(cross.aarch64.runtime PROPERTIES FIXTURES_SETUP aarch64_runtime TIMEOUT 900
                     LABELS cross)
add_test(NAME cross.aarch64.models
         COMMAND bash ${RELAX_VENV_PYTHON} ${RELAX_CROSS_TEST_DIR}/cross_check.py
                 --relaxc $<TARGET_FILE:relaxc> --relax-run ${RELAX_AARCH64_DIR}/tools/relax-run
                 --work ${CMAKE_CURRENT_BINARY_DIR}/cross_models)
set_tests_properties(cross.aarch64.models PROPERTIES FIXTURES_REQUIRED aarch64_runtime
                     TIMEOUT 900 LABELS cross PROCESSORS 2)
add_test(NAME cross.aarch64.foreign
         COMMAND bash ${RELAX_VENV_PYTHON} ${RELAX_CROSS_TEST_DIR}/cross_check.py
                 --relaxc $<TARGET_FILE:relaxc> --relax-run ${RELAX_AARCH64_DIR}/tools/relax-run
                 --work ${CMAKE_CURRENT_BINARY_DIR}/cross_foreign --foreign $<TARGET_FILE:relax-run>)
set_tests_properties(cross.aarch64.foreign PROPERTIES FIXTURES_REQUIRED aarch64_runtime
                     TIMEOUT 300 LABELS cross)
