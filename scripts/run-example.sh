#!/usr/bin/env bash
# The main job on the bundled example: set up, build, then compile
# examples/mlp.sy for two CPU devices, run it, and check its outputs against
# the reference interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh build -DCMAKE_BUILD_TYPE=Release
ninja -C build switchyard
SY=build/bin/switchyard
work=build/example
rm -rf "$work" && mkdir -p "$work/inputs"
inputs=$(/usr/bin/python3 examples/make_inputs.py examples/mlp.sy "$work/inputs")

echo "== check and format"
$SY check examples/mlp.sy
$SY fmt examples/mlp.sy > "$work/mlp.fmt.sy"
echo "== placement (why the second layer's activations cross once)"
$SY opt examples/mlp.sy -p InferType,PlanDevices --devices cpu:0,cpu:1 --emit-dot "$work/mlp.placed.dot" \
  | grep -E "device_copy|-> " || true
$SY explain examples/mlp.sy --devices cpu:0,cpu:1 --node %7
echo "== compile for cpu:0,cpu:1"
$SY compile examples/mlp.sy -o "$work/mlp.art" --devices cpu:0,cpu:1 --place op:nn.softmax=cpu:1 --time
echo "== run"
# shellcheck disable=SC2086
$SY run "$work/mlp.art" $inputs --output-dir "$work/out" --repeat 20 --profile
echo "== reference interpreter"
# shellcheck disable=SC2086
$SY run-ir examples/mlp.sy $inputs --output-dir "$work/ref"
/usr/bin/python3 - "$work" <<'PY'
import sys
import numpy as np
d = sys.argv[1]
a, b = np.load(f"{d}/ref/output_0.npy"), np.load(f"{d}/out/output_0.npy")
print(f"compiled vs interpreter: max abs difference {abs(a - b).max():.3g}")
sys.exit(0 if np.allclose(a, b, rtol=1e-4, atol=1e-5) else 1)
PY
