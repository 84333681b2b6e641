#!/usr/bin/env bash
# The full test run: what scripts/test.sh runs, with the sampled tiers in full (RELAX_TEST_FULL=1:
# the dynamic variant of both ONNX node-test suites on every test instead of a 20 % sample), then
# the long fuzzer runs (10 minutes each for the text-IR parser and the ONNX importer).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "${RELAX_ROOT}"
BUILD_DIR="${RELAX_BUILD_DIR:-${RELAX_ROOT}/build}"
start=$(date +%s)
RELAX_TEST_FULL=1 bash scripts/test.sh
FUZZ_SECONDS="${FUZZ_SECONDS:-600}"
cd "${BUILD_DIR}/fuzz"
mkdir -p corpus onnx_corpus
echo "[test_full] parser fuzzer, ${FUZZ_SECONDS} s"
./parser_fuzzer -max_total_time="${FUZZ_SECONDS}" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 corpus seeds
echo "[test_full] ONNX importer fuzzer, ${FUZZ_SECONDS} s"
./onnx_importer_fuzzer -max_total_time="${FUZZ_SECONDS}" -timeout=10 -rss_limit_mb=4096 -max_len=262144 \
  -print_final_stats=1 onnx_corpus onnx_seeds "${RELAX_ROOT}/test/fuzz/onnx_regressions"
echo "[test_full] done in $(( $(date +%s) - start )) s"
