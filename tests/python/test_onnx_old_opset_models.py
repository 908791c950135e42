# Real models as exporters and model zoos write them: ResNet-18 and
# MobileNetV2 (tests/models/model_zoo.py, random weights from fixed seeds)
# exported by PyTorch at opsets 9, 11 and 12 (Slice and Clip with attributes
# at 9, Squeeze, Unsqueeze and ReduceMean with axes attributes, Dropout's
# ratio attribute), imported, compiled for cpu:0 and compared with PyTorch
# within 1e-4 of the output's largest magnitude.
import pathlib
import sys

import numpy as np
import pytest

import switchyard as sy

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "models"))
torch = pytest.importorskip("torch", reason="the exported models need Debian's python3-torch")
pytest.importorskip("torchvision", reason="the exported models need Debian's python3-torchvision")
onnx = pytest.importorskip("onnx", reason="the exported models need Debian's python3-onnx")
import model_zoo  # noqa: E402

TOLERANCE = 1e-4  # relative to the output's largest magnitude


@pytest.mark.parametrize("opset", [9, 11, 12])
@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2"])
def test_model_exported_at_an_old_opset_matches_pytorch(name, opset, tmp_path):
    model = model_zoo.build_model(name)
    x = model_zoo.make_input(name)
    with torch.no_grad():
        expected = model(torch.from_numpy(x)).numpy()
    path = tmp_path / f"{name}_{opset}.onnx"
    torch.onnx.export(model, (torch.from_numpy(x),), str(path), opset_version=opset, input_names=["input"],
                      output_names=["output"])
    declared = [entry.version for entry in onnx.load(str(path)).opset_import if entry.domain in ("", "ai.onnx")]
    assert declared == [opset]
    mod = sy.frontend.from_onnx(path)
    sy.build(mod, ["cpu:0"], tmp_path / "artifact")
    actual = np.asarray(sy.runtime.load(tmp_path / "artifact").run(input=x))
    assert actual.shape == expected.shape
    error = float(np.abs(actual - expected).max() / max(np.abs(expected).max(), 1e-30))
    print(f"{name} at opset {opset}: relative error {error:.2e}")
    assert error <= TOLERANCE, f"{name} at opset {opset}: relative error {error:.2e}"
