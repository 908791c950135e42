#!/usr/bin/env bash
# Runs one libFuzzer target for a while, starting from its seed corpus.
#   bash scripts/fuzz.sh TARGET SECONDS     # TARGET: text_parser pipeline onnx_import artifact
# Builds build-fuzz/ with clang 14 (everything instrumented with ASan, UBSan
# and libFuzzer's coverage), fuzzes into build-fuzz/corpus/TARGET (seeded
# from tests/fuzz/corpus/TARGET) and leaves any crashing input in
# build-fuzz/findings/TARGET/: copy it into tests/fuzz/corpus/TARGET/ as a
# regression once fixed, and ctest replays it from then on.
set -euo pipefail
cd "$(dirname "$0")/.."
targets="text_parser pipeline onnx_import artifact"
if [ $# -ne 2 ] || [[ " $targets " != *" $1 "* ]] || ! [[ "$2" =~ ^[0-9]+$ ]]; then
  echo "usage: bash scripts/fuzz.sh TARGET SECONDS   (TARGET: ${targets// /, })" >&2
  exit 2
fi
target=$1 seconds=$2
for p in clang-14 libclang-rt-14-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="${missing:-} $p"
done
if [ -n "${missing:-}" ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get install -y -qq $missing >/dev/null
fi
bash scripts/setup.sh build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang-14 \
  -DCMAKE_CXX_COMPILER=clang++-14 -DSY_FUZZ=ON -DSY_PYTHON=OFF -DSY_BENCH=OFF
ninja -C build-fuzz "fuzz_$target"
corpus=build-fuzz/corpus/$target findings=build-fuzz/findings/$target
mkdir -p "$corpus" "$findings"
# Inputs beyond 64 KiB add bytes, not structure; 2 GiB bounds a run's memory.
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 \
  "build-fuzz/bin/fuzz_$target" "$corpus" "tests/fuzz/corpus/$target" \
  -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 -timeout=25 \
  -artifact_prefix="$findings/" -print_final_stats=1
