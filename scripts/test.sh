#!/usr/bin/env bash
# Builds Switchyard and runs every test (C++ GoogleTest programs, the error
# message suite and the Python suite) through ctest, in a release build in
# build/. scripts/sanitize.sh runs them under the sanitizers.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh build -DCMAKE_BUILD_TYPE=Release -DSY_WERROR=ON
ninja -C build
cd build
ctest --output-on-failure --timeout 1500
