#!/bin/sh
# Writes the parser fuzzer's seed corpus: one file per module of every test/lit
# .rx input (modules split at "// -----" lines). Usage: make_seeds.sh LIT_DIR OUT_DIR
set -e
lit_dir=$1
out_dir=$2
rm -rf "$out_dir"
mkdir -p "$out_dir"
find "$lit_dir" -name '*.rx' | sort | while read -r f; do
  base=$(basename "$f" .rx)
  awk -v out="$out_dir/$base" 'BEGIN { n = 0 } /^\/\/ -----$/ { n++; next } { print > (out "_" n ".rx") }' "$f"
done
