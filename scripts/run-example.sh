#!/usr/bin/env bash
# The main job: set up and build, export torchvision's ResNet-18 to ONNX
# (random weights from a fixed seed), import it, compile it split across two
# CPU devices (the stem pinned to cpu:0, the last stage to cpu:1; planning
# places the rest to copy the fewest bytes), run it, and compare the output
# with PyTorch's.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh build -DCMAKE_BUILD_TYPE=Release
ninja -C build switchyard
SY=build/bin/switchyard
work=build/example
models=build/models
rm -rf "$work" && mkdir -p "$work"

echo "== export ResNet-18 from torchvision to ONNX"
/usr/bin/python3 tests/models/export_models.py --out "$models" --models resnet18
model=$models/resnet18.onnx
place=(--place 'node:/conv1/*=cpu:0' --place 'node:/layer4/*=cpu:1')

echo "== import: what the model holds, and where planning puts it"
$SY inspect "$model" --devices cpu:0,cpu:1 "${place[@]}"
echo "== why a node of the last stage is on cpu:1"
$SY explain "$model" --devices cpu:0,cpu:1 "${place[@]}" --node /layer4/layer4.1/conv2/Conv | head -2
echo "== compile for cpu:0,cpu:1"
$SY compile "$model" -o "$work/resnet18.art" --devices cpu:0,cpu:1 "${place[@]}" --time | tail -4
$SY inspect "$work/resnet18.art"
echo "== run"
$SY run "$work/resnet18.art" --input input="$models/resnet18.input.npy" --output-dir "$work/out" --repeat 10
echo "== compare with PyTorch"
/usr/bin/python3 - "$work/out/output.npy" "$models/resnet18.expected.npy" <<'PY'
import sys
import numpy as np
actual, expected = np.load(sys.argv[1]), np.load(sys.argv[2])
error = float(np.abs(actual - expected).max() / np.abs(expected).max())
same_class = int(actual.argmax()) == int(expected.argmax())
print(f"Switchyard vs PyTorch: max difference {error:.2e} of the largest logit; same top class: {same_class}")
sys.exit(0 if error <= 1e-4 and same_class else 1)
PY
