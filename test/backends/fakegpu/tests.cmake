# The fake GPU backend (fakegpu_backend.cc) end to end with relaxc-test-backends: a module
# compiles (its kernels' MLIR shows its own ABI: i32 scalars, blocks of 128), a row sum's
# cross-thread reduction shuffles across its 64-lane subgroups (offsets 32 down to 1), a kernel
# holding i64 is refused naming it, the artifact is refused at run time (no device API loads
# format "fakegpu").
set(FAKEGPU_DIR ${CMAKE_CURRENT_LIST_DIR})
set(FAKEGPU_WORK ${CMAKE_CURRENT_BINARY_DIR}/fakegpu)
set(FAKEGPU_RELAXC $<TARGET_FILE:relaxc-test-backends>)
add_test(NAME backends.fakegpu.compile
         COMMAND sh -c "mkdir -p ${FAKEGPU_WORK} && \"$0\" compile ${FAKEGPU_DIR}/add.rx --target fakegpu -o ${FAKEGPU_WORK}/add.so --stats --print-ir-after=codegen-mlir 2>&1 | tee ${FAKEGPU_WORK}/compile.log && grep -q 'device kernels: 1, fallbacks: 0' ${FAKEGPU_WORK}/compile.log && grep -q 'gpu.func @add_kernel0(%arg0: memref<?xf32>, %arg1: memref<?xf32>, %arg2: memref<?xf32>, %arg3: i32) kernel' ${FAKEGPU_WORK}/compile.log && grep -q 'fakegpu.injective' ${FAKEGPU_WORK}/compile.log"
                 ${FAKEGPU_RELAXC})
set_tests_properties(backends.fakegpu.compile PROPERTIES FIXTURES_SETUP fakegpu_artifact TIMEOUT 120
                     LABELS backends)
add_test(NAME backends.fakegpu.run_refused
         COMMAND bash ${RELAX_VENV_PYTHON} ${PROJECT_SOURCE_DIR}/test/cli/expect_error.py --exit-code 1
                 --regex "unknown device binary format 'fakegpu' \\(this runtime loads: cubin, ptx, spirv\\)"
                 -- $<TARGET_FILE:relax-run> ${FAKEGPU_WORK}/add.so)
set_tests_properties(backends.fakegpu.run_refused PROPERTIES FIXTURES_REQUIRED fakegpu_artifact
                     TIMEOUT 120 LABELS backends)
# (The kernel is tried again with the one-thread fallback first, which fails the same way: a
# warning, then the error.)
add_test(NAME backends.fakegpu.no_int64
         COMMAND sh -c "mkdir -p ${FAKEGPU_WORK}; \"$0\" compile ${FAKEGPU_DIR}/add_i64.rx --target fakegpu -o ${FAKEGPU_WORK}/add_i64.so 2>${FAKEGPU_WORK}/i64.err; rc=$?; cat ${FAKEGPU_WORK}/i64.err; [ $rc = 1 ] && tail -1 ${FAKEGPU_WORK}/i64.err | grep -q \"^error: kernel 'add_kernel0' failed.*buffer '[A-Za-z]*' is i64, which fakegpu kernels cannot hold\""
                 ${FAKEGPU_RELAXC})
set_tests_properties(backends.fakegpu.no_int64 PROPERTIES TIMEOUT 120 LABELS backends)
add_test(NAME backends.fakegpu.subgroup_64
         COMMAND sh -c "mkdir -p ${FAKEGPU_WORK} && \"$0\" compile ${FAKEGPU_DIR}/rowsum.rx --target fakegpu -o ${FAKEGPU_WORK}/rowsum.so --print-ir-after=codegen-mlir 2>&1 | grep -q 'gpu.shuffle  down %[0-9]*, %c32_i32, %c64_i32'"
                 ${FAKEGPU_RELAXC})
set_tests_properties(backends.fakegpu.subgroup_64 PROPERTIES TIMEOUT 120 LABELS backends)
