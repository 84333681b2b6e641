#!/bin/sh
# Writes the ONNX importer fuzzer's seed corpus: the model of every ONNX backend node test
# (Debian libonnx-testdata), one file per test. With SAMPLE_DIR, also every 8th of them (in name
# order) there: the seeds of the bounded compile-fuzzer run in ctest, which must get through its
# seeds (each one compiled down to objects) before its time limit starts to count.
# Usage: make_onnx_seeds.sh NODE_DIR OUT_DIR [SAMPLE_DIR]
set -e
node_dir=$1
out_dir=$2
sample_dir=$3
rm -rf "$out_dir"
mkdir -p "$out_dir"
for d in "$node_dir"/*/; do
  [ -f "$d/model.onnx" ] && cp "$d/model.onnx" "$out_dir/$(basename "$d").onnx"
done
if [ -n "$sample_dir" ]; then
  rm -rf "$sample_dir"
  mkdir -p "$sample_dir"
  i=0
  for f in "$out_dir"/*.onnx; do
    [ $((i % 8)) -eq 0 ] && cp "$f" "$sample_dir/"
    i=$((i + 1))
  done
fi
exit 0
