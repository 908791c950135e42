#!/usr/bin/env bash
# The GPU check of the CUDA work (issue 11), in two halves:
#
#   bash scripts/gpu-check.sh pack          here, after building with a CUDA toolkit:
#                                           packs the CUDA test programs and the
#                                           Debian libraries they need into
#                                           build/gpu-pack/ (carry that folder)
#   bash scripts/gpu-check.sh run [FILE]    on the GPU machine (it starts bare: no
#                                           gtest, oneDNN or protobuf to build with;
#                                           its own CUDA toolkit supplies NVRTC):
#                                           runs them with a GPU required, writing
#                                           the results to FILE ($OUT/gpu-check.txt,
#                                           else ./gpu-check.txt)
#
# What runs there, in well under 8 minutes: the CUDA renderer's and NVRTC's
# tests, the kernels of fused groups run on cuda:0 against the interpreter
# (CudaRun.*; SY_REQUIRE_GPU=1 makes a missing GPU a failure instead of a
# skip), whole artifacts on cuda:0 and cuda:0,cpu:0 built there and run
# against the interpreter (CudaArtifact.*: they need the machine's C++
# compiler for model.so, and write under $work/scratch), the cuda device of
# the runtime's registry and artifacts, the driver loader's tests, and the
# model suite (scripts/gpu_suite.py, with the machine's own PyTorch) all on
# cuda:0 and split with the host, against PyTorch eager at batch 1 and 32,
# its table written beside the results (gpu-suite.md); PYTHON names the
# Python with PyTorch (default python3, which on the GPU machine has it).
# Example (device tool): command "bash scripts/gpu-check.sh run", carry ["build/gpu-pack"].
set -uo pipefail
cd "$(dirname "$0")/.."

pack() {
  local build=${1:-build} dir=build/gpu-pack
  local programs=(test_backend test_runtime switchyard)
  for program in "${programs[@]}"; do
    [ -x "$build/bin/$program" ] || { echo "gpu-check: $build/bin/$program is missing: build first" >&2; exit 1; }
  done
  rm -rf "$dir" && mkdir -p "$dir/stage/bin" "$dir/stage/lib"
  for program in "${programs[@]}"; do cp "$build/bin/$program" "$dir/stage/bin/"; done
  # Every shared library they load but the C and C++ runtimes (the GPU
  # machine's are newer) and CUDA's own (NVRTC comes from its toolkit; the
  # driver is never linked).
  for program in "${programs[@]}"; do ldd "$build/bin/$program"; done | awk '$3 ~ /^\// {print $3}' | sort -u |
    grep -Ev '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|librt|libdl|ld-linux[^/]*|libnvrtc[^/]*)\.so' |
    while read -r lib; do cp -L "$lib" "$dir/stage/lib/"; done
  tar -C "$dir/stage" -cJf "$dir/pack.tar.xz" bin lib && rm -rf "$dir/stage"
  echo "gpu-check: packed $(du -h "$dir/pack.tar.xz" | cut -f1) into $dir/pack.tar.xz"
}

find_nvrtc() {
  local candidate
  for candidate in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -e "$candidate/libnvrtc.so.13" ] && { echo "$candidate"; return; }
  done
  candidate=$(ldconfig -p 2>/dev/null | awk '/libnvrtc\.so\.13 / {print $NF; exit}')
  [ -n "$candidate" ] && { dirname "$candidate"; return; }
  # The nvidia-cuda-nvrtc wheel beside PyTorch.
  candidate=$(find / -xdev -name 'libnvrtc.so.13' 2>/dev/null | head -1)
  [ -n "$candidate" ] && dirname "$candidate"
}

run() {
  local results=${1:-${OUT:-.}/gpu-check.txt} work=/tmp/sy-gpu-check status=0
  mkdir -p "$(dirname "$results")" && : >"$results"
  log() { echo "$*" | tee -a "$results"; }
  [ -f build/gpu-pack/pack.tar.xz ] || { log "gpu-check: no build/gpu-pack/pack.tar.xz: run 'gpu-check.sh pack' where it builds, and carry build/gpu-pack"; exit 1; }
  rm -rf "$work" && mkdir -p "$work" && tar -C "$work" -xJf build/gpu-pack/pack.tar.xz
  local nvrtc
  nvrtc=$(find_nvrtc)
  log "gpu-check: $(date -u +%FT%TZ) on $(hostname)"
  log "GPU: $(nvidia-smi -L 2>/dev/null | head -1 || true)"
  log "NVRTC: ${nvrtc:-not found}"
  # cuBLASLt and cuDNN, which the runtime dlopens: the GPU machine's own (too large to pack).
  local libraries
  libraries=$(find / -xdev \( -name 'libcublasLt.so.13' -o -name 'libcudnn.so.9' \) -printf '%h:' 2>/dev/null)
  libraries=${libraries%:}
  log "cuBLASLt, cuDNN: ${libraries:-not found}"
  export LD_LIBRARY_PATH="$work/lib${nvrtc:+:$nvrtc}${libraries:+:$libraries}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export SY_REQUIRE_GPU=1
  # The artifact tests' scratch and kernel cache, away from the build tree they were built in.
  export SY_TEST_BINARY_DIR="$work/scratch"
  mkdir -p "$SY_TEST_BINARY_DIR"
  log "C++ compiler: $(${SY_CXX:-c++} --version 2>/dev/null | head -1 || echo 'none: CudaArtifact.* will fail')"
  local step
  for step in "test_backend --gtest_filter=Cuda*" "test_runtime --gtest_filter=CudaDriver*:CudaLibrary*:DeviceRegistry.Cuda*:ArtifactTest.AMissingCuda*"; do
    log "== $step"
    # shellcheck disable=SC2086
    timeout 420 "$work/bin/"$step >>"$results" 2>&1
    local code=$?
    [ $code -eq 0 ] || { status=1; log "FAILED: $step (exit $code)"; }
  done
  local suite="$(dirname "$results")/gpu-suite.md"
  log "== the model suite against PyTorch eager: $suite"
  timeout 300 "${PYTHON:-python3}" scripts/gpu_suite.py --switchyard "$work/bin/switchyard" --out "$suite" >>"$results" 2>&1
  local code=$?
  [ $code -eq 0 ] || { status=1; log "FAILED: the model suite (exit $code)"; }
  log "gpu-check: $([ $status -eq 0 ] && echo passed || echo FAILED); results in $results"
  exit $status
}

case "${1:-}" in
  pack) shift; pack "$@" ;;
  run) shift; run "$@" ;;
  *) sed -n '2,20p' "$0"; exit 2 ;;
esac
