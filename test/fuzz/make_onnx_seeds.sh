#!/bin/sh
# Writes the ONNX importer fuzzer's seed corpus: the model of every ONNX backend node test
# (Debian libonnx-testdata), one file per test. Usage: make_onnx_seeds.sh NODE_DIR OUT_DIR
set -e
node_dir=$1
out_dir=$2
rm -rf "$out_dir"
mkdir -p "$out_dir"
for d in "$node_dir"/*/; do
  [ -f "$d/model.onnx" ] && cp "$d/model.onnx" "$out_dir/$(basename "$d").onnx"
done
exit 0
