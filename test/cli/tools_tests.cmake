# relaxc inspect and relaxc compile --progress (issue 36). Included at the end of tests.cmake,
# which defines relax_cli_error, RELAX_EXPECT_OUTPUT, RELAXC and W (the cli_bad_inputs files).
set(RELAX_INSPECT_CASES bash ${RELAX_VENV_PYTHON} ${RELAX_CLI_TEST_DIR}/inspect_cases.py)

# The classifier artifact (compiled without --bound): signature, target, rules, sections.
add_test(NAME cli.inspect.cls
         COMMAND ${RELAX_EXPECT_OUTPUT}
                 --regex "compiler: relaxc [0-9]+\\.[0-9]+"
                 --regex "target: cpu\n"
                 --regex "host: x86_64-unknown-linux-gnu, -mcpu=native \\([a-z0-9-]+\\), [0-9]+ CPU features"
                 --regex "inputs:\n  x: float32\\[x_d0, 3, x_d2, x_d3\\]\n"
                 --regex "outputs:\n  [^:]+: float32\\[x_d0, 2\\]\n"
                 --regex "bounds: none \\(compiled without --bound\\)"
                 --regex "kernels: [0-9]+ host kernels \\([0-9]+ tuned\\), by schedule rule:"
                 --regex "  cpu\\.register-tile \\([0-9]+\\): fused_conv2d"
                 --regex "  cpu\\.injective \\([0-9]+\\): "
                 --regex "\\(\\+[0-9]+ more\\)"
                 --regex "byoc: none"
                 --regex "sections:\n  elf +[0-9]+ bytes at 0\n  params +[0-9]+ bytes"
                 --regex "  executable +[0-9]+ bytes"
                 --regex "  manifest +[0-9]+ bytes"
                 --regex "params: [0-9]+ bytes, [0-9]+ tensor constants"
                 -- ${RELAXC} inspect ${RELAX_CLS_ARTIFACT})
set_tests_properties(cli.inspect.cls PROPERTIES FIXTURES_REQUIRED cls_artifact TIMEOUT 60
                     LABELS cli)
add_test(NAME cli.inspect.cls_json
         COMMAND ${RELAX_INSPECT_CASES} json --relaxc ${RELAXC} --artifact ${RELAX_CLS_ARTIFACT})
set_tests_properties(cli.inspect.cls_json PROPERTIES FIXTURES_REQUIRED cls_artifact TIMEOUT 60
                     LABELS cli)
# An artifact written before the manifest section (the classifier's, without it): inspect says
# "not recorded", and the loader, which ignores sections it does not know, still runs it.
add_test(NAME cli.inspect.no_manifest
         COMMAND ${RELAX_INSPECT_CASES} no_manifest --relaxc ${RELAXC}
                 --artifact ${RELAX_CLS_ARTIFACT} --out ${W}/cls_no_manifest.so
                 --input ${W}/good.npy)
set_tests_properties(cli.inspect.no_manifest PROPERTIES
                     FIXTURES_REQUIRED "cls_artifact;cli_bad_inputs" TIMEOUT 60 LABELS cli)
# An AArch64 artifact is inspected without being loaded (skipped without the AArch64 libc).
add_test(NAME cli.inspect.aarch64
         COMMAND ${RELAX_INSPECT_CASES} cross --relaxc ${RELAXC}
                 --model ch_ppocr_mobile_v2.0_cls_infer.onnx --out ${W}/cls_aarch64.so)
set_tests_properties(cli.inspect.aarch64 PROPERTIES FIXTURES_REQUIRED cli_bad_inputs
                     TIMEOUT 300 LABELS cli SKIP_RETURN_CODE 77)

# Files that are not artifacts: exit 1 with an error naming the file; no argument: exit 2.
relax_cli_error(inspect.missing 1 "cannot open artifact '.*no_such\\.so': No such file"
                ${RELAXC} inspect ${W}/no_such.so)
relax_cli_error(inspect.corrupted 1 "corrupted\\.so.*checksum mismatch"
                ${RELAXC} inspect ${W}/corrupted.so)
relax_cli_error(inspect.truncated_half 1 "truncated_half\\.so.*truncated"
                ${RELAXC} inspect ${W}/truncated_half.so)
relax_cli_error(inspect.truncated_100 1 "truncated_100\\.so.*truncated"
                ${RELAXC} inspect ${W}/truncated_100.so)
relax_cli_error(inspect.directory 1 "a_directory\\.onnx' is a directory, not an artifact"
                ${RELAXC} inspect ${W}/a_directory.onnx)
relax_cli_error(inspect.not_an_artifact 1 "not_onnx\\.onnx.*not (a relaxc|an) artifact"
                ${RELAXC} inspect ${W}/not_onnx.onnx)
relax_cli_error(inspect.device_file 1 "'/dev/null' is not a regular file \\(artifact expected\\)"
                ${RELAXC} inspect /dev/null)
relax_cli_error(inspect.no_argument 2 "artifact is required" ${RELAXC} inspect)

# --progress=always off a terminal: plain "[relaxc] 2.0 s  codegen: kernels 8/60" lines once the
# compile passes 2 s (PP-OCRv4 det: about 9 s on 2 cores); never: none; another mode: exit 2.
add_test(NAME cli.progress
         COMMAND ${RELAX_INSPECT_CASES} progress --relaxc ${RELAXC}
                 --model ch_PP-OCRv4_det_infer.onnx --out ${W}/progress_det.so)
set_tests_properties(cli.progress PROPERTIES FIXTURES_REQUIRED cli_bad_inputs TIMEOUT 600
                     LABELS cli)
