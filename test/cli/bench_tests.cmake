# `relaxc bench` (issue 36): the classifier artifact and model timed, next to onnxruntime, as
# JSON, and its errors. Included at the end of tests.cmake (RELAXC, W, relax_cli_error,
# RELAX_EXPECT_OUTPUT). The .onnx model's path is known only when the test runs
# (scripts/env.sh, through venv-python.sh, exports RELAX_CLS_MODEL), so those tests go through sh.
set(BENCH_DIMS --dim x_d0=1,x_d2=48,x_d3=192)
set(BENCH_ROW "[0-9]+\\.[0-9]+")

add_test(NAME cli.bench.artifact
         COMMAND ${RELAX_EXPECT_OUTPUT}
                 --regex "^bench: .*ch_ppocr_mobile_v2\\.0_cls\\.so$"
                 --regex "input x: float32\\[1,3,48,192\\] generated \\(seed 0\\)"
                 --regex "threads: 1, warm-up runs: 3, timed runs: 5"
                 --regex "latency p50 \\(ms\\) +${BENCH_ROW}$"
                 --regex "latency p99 \\(ms\\) +${BENCH_ROW}$"
                 --regex "throughput \\(runs/s\\) +${BENCH_ROW}$"
                 --regex "peak live tensors \\(MiB\\) +${BENCH_ROW}$"
                 --regex "peak RSS \\(MiB\\) +${BENCH_ROW}$"
                 -- ${RELAXC} bench ${RELAX_CLS_ARTIFACT} --runs 5 --threads 1 ${BENCH_DIMS})
# Inputs from a file: its symbolic dims need no --dim.
add_test(NAME cli.bench.input_file
         COMMAND ${RELAX_EXPECT_OUTPUT} --regex "input x: float32\\[1,3,48,192\\] from .*good\\.npy"
                 --regex "timed runs: 3$"
                 -- ${RELAXC} bench ${RELAX_CLS_ARTIFACT} --runs 3 --warmup 1 --input x=${W}/good.npy)
add_test(NAME cli.bench.model_vs_onnxruntime
         COMMAND ${RELAX_EXPECT_OUTPUT}
                 --regex "^bench: .*ch_ppocr_mobile_v2\\.0_cls_infer\\.onnx \\(compiled for cpu in ${BENCH_ROW} s\\)"
                 --regex "relaxc +onnxruntime$"
                 --regex "latency p50 \\(ms\\) +${BENCH_ROW} +${BENCH_ROW}$"
                 --regex "peak live tensors \\(MiB\\) +${BENCH_ROW} +-$"
                 --regex "peak RSS \\(MiB\\) +${BENCH_ROW} +${BENCH_ROW}$"
                 --regex "onnxruntime 1\\.[0-9.]+ \\(CPUExecutionProvider\\): relaxc is ${BENCH_ROW}x (faster|slower) at p50"
                 -- sh -c "exec \"$1\" bench \"$RELAX_CLS_MODEL\" --vs onnxruntime --runs 5 --threads 1 --dim x_d0=1,x_d2=48,x_d3=192"
                 sh ${RELAXC})
# --json: stdout is one JSON document (the check's Python has its lines as \n: no semicolons,
# which would split a CMake argument).
set(BENCH_JSON_CHECK "import json, sys\nd = json.load(sys.stdin)\n"
    "lat = [d[k][\"latency_ms\"] for k in (\"relaxc\", \"onnxruntime\")]\n"
    "assert d[\"runs\"] == 5 and d[\"threads\"] == 1 and d[\"speedup_p50\"] > 0, d\n"
    "assert d[\"relaxc\"][\"peak_live_tensor_bytes\"] > 0, d\n"
    "assert all(0 < x[\"min\"] <= x[\"p50\"] <= x[\"p90\"] <= x[\"p99\"] <= x[\"max\"] for x in lat), lat\n"
    "print(\"json ok:\", d[\"runs\"], \"runs, relaxc and onnxruntime\")\n")
string(CONCAT BENCH_JSON_CHECK ${BENCH_JSON_CHECK})
add_test(NAME cli.bench.json
         COMMAND ${RELAX_EXPECT_OUTPUT} --regex "json ok: 5 runs, relaxc and onnxruntime"
                 -- sh -c "\"$1\" bench \"$2\" --model \"$RELAX_CLS_MODEL\" --vs onnxruntime --runs 5 --threads 1 --json --dim x_d0=1,x_d2=48,x_d3=192 | python3 -c '${BENCH_JSON_CHECK}'"
                 sh ${RELAXC} ${RELAX_CLS_ARTIFACT})
set_tests_properties(cli.bench.artifact cli.bench.input_file cli.bench.model_vs_onnxruntime
                     cli.bench.json PROPERTIES
                     FIXTURES_REQUIRED "cls_artifact;cli_bad_inputs" TIMEOUT 120 LABELS cli)

relax_cli_error(bench.missing_file 1
                "error: cannot open model or artifact file '.*no_such\\.so': No such file"
                ${RELAXC} bench ${W}/no_such.so)
relax_cli_error(bench.corrupted 1 "error: corrupt artifact '.*corrupted\\.so': checksum mismatch"
                ${RELAXC} bench ${W}/corrupted.so ${BENCH_DIMS})
relax_cli_error(bench.not_onnx 1 "error: '.*not_onnx\\.onnx' is not a valid ONNX model"
                ${RELAXC} bench ${W}/not_onnx.onnx)
relax_cli_error(bench.onnxruntime_absent 1
                "error: --vs onnxruntime: onnxruntime is not importable by '/usr/bin/python3' \\(pip install onnxruntime, or set RELAX_PYTHON to a Python that has it\\)"
                ${CMAKE_COMMAND} -E env RELAX_PYTHON=/usr/bin/python3
                ${RELAXC} bench ${RELAX_CLS_ARTIFACT} --vs onnxruntime --model ${W}/not_onnx.onnx)
relax_cli_error(bench.vs_other 2 "error: --vs: tvm not in \\{onnxruntime\\}"
                ${RELAXC} bench ${RELAX_CLS_ARTIFACT} --vs tvm)
relax_cli_error(bench.vs_without_model 2
                "error: --vs onnxruntime needs the ONNX model of artifact '.*cls\\.so': give it with --model M\\.onnx"
                ${RELAXC} bench ${RELAX_CLS_ARTIFACT} --vs onnxruntime)
relax_cli_error(bench.unknown_dim 1
                "error: unknown symbolic dim 'n' in --dim \\(symbolic dims: x_d0, x_d2, x_d3\\)"
                ${RELAXC} bench ${RELAX_CLS_ARTIFACT} --dim n=4)
relax_cli_error(bench.threads_zero 2 "error: --threads: Value 0 not in range 1 to 1024"
                ${RELAXC} bench ${RELAX_CLS_ARTIFACT} --threads 0)
# Symbolic dims left at 1 make the classifier's input too small: the error says which took 1.
relax_cli_error(bench.defaulted_dims 1
                "error: MaxPool .*must be >= 1 \\(input too small\\);^\\(symbolic dims not given with --dim took the size 1: x_d0, x_d2, x_d3. give sizes with --dim NAME=VALUE\\)"
                ${RELAXC} bench ${RELAX_CLS_ARTIFACT} --runs 1)
