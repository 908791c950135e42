#!/usr/bin/env bash
# CI's sanitizer stages (also runnable by hand):
#   bash scripts/sanitize.sh asan   # build-asan/: AddressSanitizer + UBSan, the suite
#   bash scripts/sanitize.sh tsan   # build-tsan/: ThreadSanitizer, the concurrency tests
#   bash scripts/sanitize.sh        # both
# Any sanitizer report fails the stage (UBSan does not recover; ASan and TSan
# exit non-zero on their first report).
set -euo pipefail
cd "$(dirname "$0")/.."
stages=("${@:-asan tsan}")
read -r -a stages <<<"${stages[*]}"

# ASan+UBSan: every ctest entry but the two that compile torchvision models
# and ONNX's thousand backend cases; under ASan they take most of an hour
# and exercise the same code as the unit-level suites (they stay in the
# ordinary stage). -O1 keeps reports precise and the build fast; -g1 gives
# them file and line.
asan_stage() {
  bash scripts/setup.sh build-asan -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="-O1 -g1" \
    -DSY_SANITIZE=ON -DSY_WERROR=ON -DSY_BENCH=OFF
  ninja -C build-asan
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
     ctest --output-on-failure --timeout 1800 -E '^(python_models|python_unseen_models|python_conformance|python_fusion_fuzz|python_zoo_opsets)$')
}

# TSan: the runtime's concurrency tests (thread pools, many threads running
# one artifact, the C API from several threads), in test_runtime alone so
# the stage builds only the runtime. libgomp and oneDNN are not
# instrumented, so their internal synchronisation is invisible to TSan;
# tests/tsan.supp names them.
tsan_stage() {
  bash scripts/setup.sh build-tsan -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="-O1 -g1" \
    -DSY_TSAN=ON -DSY_WERROR=ON -DSY_BENCH=OFF -DSY_PYTHON=OFF
  ninja -C build-tsan test_runtime
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp" \
    build-tsan/bin/test_runtime --gtest_filter='*Thread*:*Concurrent*'
}

for stage in "${stages[@]}"; do
  case "$stage" in
    asan) asan_stage ;;
    tsan) tsan_stage ;;
    *) echo "sanitize.sh: unknown stage '$stage' (asan or tsan)" >&2; exit 2 ;;
  esac
done
