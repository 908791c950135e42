#!/usr/bin/env bash
# Builds Switchyard and runs every test (C++ GoogleTest programs, the error
# message suite and the Python suite) through ctest.
#   bash scripts/test.sh            # release build in build/
#   bash scripts/test.sh --debug    # ASan+UBSan debug build in build-debug/
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--debug" ]; then
  build_dir=build-debug
  bash scripts/setup.sh "$build_dir" -DCMAKE_BUILD_TYPE=Debug -DSY_SANITIZE=ON -DSY_WERROR=ON -DSY_BENCH=OFF
else
  build_dir=build
  bash scripts/setup.sh "$build_dir" -DCMAKE_BUILD_TYPE=Release -DSY_WERROR=ON
fi
ninja -C "$build_dir"
cd "$build_dir"
ctest --output-on-failure --timeout 1500
