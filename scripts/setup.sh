#!/usr/bin/env bash
# Installs what Switchyard needs on a fresh Debian 12 machine (only packages
# that are missing), then configures the build. Safe to run repeatedly.
#   bash scripts/setup.sh [BUILD_DIR] [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build ccache
  libgtest-dev libbenchmark-dev nlohmann-json3-dev libfmt-dev libcli11-dev
  libdnnl-dev libssl-dev libxxhash-dev libprotobuf-dev protobuf-compiler libonnx-dev
  python3 python3-dev python3-numpy python3-pytest python3-pybind11 pybind11-dev
  graphviz
  # glpsol checks the latency placement's optimum against a mixed-integer program in the tests.
  glpk-utils
  # ONNX models: the test suite exports torchvision models and checks the
  # importer against ONNX's own backend test cases.
  python3-onnx python3-torch python3-torchvision libopenblas0-openmp libonnx-testdata
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

build_dir=${1:-build}
shift || true
cmake -S . -B "$build_dir" -G Ninja "$@" >/dev/null
