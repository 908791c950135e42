#!/bin/bash
# Compiles the same models with two builds of switchyard and says, per model
# and placement, whether the artifacts are byte for byte the same (manifest,
# model.so, weights.bin, generated sources). A refactor that must not change
# behaviour should print "identical" everywhere: then every figure (speed,
# memory, accuracy) is unchanged by construction.
#
#   bash scripts/compare_artifacts.sh BEFORE_BUILD AFTER_BUILD [MODEL ...]
#
# BEFORE_BUILD and AFTER_BUILD are build folders (bin/switchyard and lib/);
# keep a copy of the old one (cp -a build /tmp/before) before rebuilding.
# Models default to the suite's and the zoo's exported ONNX files
# (tests/models/export_models.py, bench/zoo) and examples/*.sy.
# Exits 1 if any artifact differs or only one build compiles a model.
set -u
before=$(cd "$1" && pwd); after=$(cd "$2" && pwd); shift 2
out=$(mktemp -d /tmp/compare_artifacts.XXXXXX)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/switchyard
models=("$@")
if [ ${#models[@]} -eq 0 ]; then
  models=("$cache"/suite/*.onnx "$cache"/zoo/*.onnx "$(dirname "$0")"/../examples/*.sy)
fi
compile() {  # BUILD MODEL DEVICES OUT
  LD_LIBRARY_PATH="$1/lib" "$1/bin/switchyard" compile "$2" -o "$4" --devices "$3" --emit-source >/dev/null 2>"$4.err"
}
status=0
for model in "${models[@]}"; do
  [ -f "$model" ] || continue
  name=$(basename "$model"); name=${name%.*}
  for devices in cpu:0 cpu:0,cpu:1; do
    tag=${name}_${devices//[:,]/_}
    compile "$before" "$model" "$devices" "$out/b_$tag"; b=$?
    compile "$after" "$model" "$devices" "$out/a_$tag"; a=$?
    if [ $b -ne 0 ] && [ $a -ne 0 ] && cmp -s "$out/b_$tag.err" "$out/a_$tag.err"; then
      echo "$name $devices: both refuse alike"
    elif [ $b -eq 0 ] && [ $a -eq 0 ] && diff -r -q "$out/b_$tag" "$out/a_$tag" >/dev/null; then
      echo "$name $devices: identical"
    else
      echo "$name $devices: DIFFERENT (exit $b before, $a after)"
      diff -r -q "$out/b_$tag" "$out/a_$tag" 2>&1 | head -5
      status=1
    fi
    rm -rf "$out/b_$tag" "$out/a_$tag"
  done
done
rm -rf "$out"
exit $status
