# Zoo models (tests/models/zoo_models.py) exported by the project's own
# script at old opsets (export_models.py's opset argument, as
# bench/zoo/check_accuracy.py --opsets checks the whole zoo):
# MobileNetV3-Small (HardSigmoid for hardswish and the squeeze-excitation
# gates, Dropout, Flatten) and SqueezeNet 1.1 (ceil-mode MaxPool, Fire
# concatenations) at opsets 9 and 11, and LR-ASPP's segmentation head (its
# bilinear upsampling as Resize-11 with half-pixel coordinates) at 11;
# each imported, compiled for cpu:0 and compared with PyTorch within 1e-4
# of the output's largest magnitude.
import json
import pathlib
import sys

import numpy as np
import pytest

import switchyard as sy

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "models"))
pytest.importorskip("torch", reason="the exported models need Debian's python3-torch")
pytest.importorskip("torchvision", reason="the exported models need Debian's python3-torchvision")
onnx = pytest.importorskip("onnx", reason="the exported models need Debian's python3-onnx")
import export_models  # noqa: E402
import zoo_models  # noqa: E402

TOLERANCE = 1e-4  # relative to the output's largest magnitude


@pytest.mark.parametrize("name,opset", [("mobilenet_v3_small", 9), ("mobilenet_v3_small", 11), ("squeezenet1_1", 9),
                                        ("squeezenet1_1", 11), ("lraspp_mobilenet_v3_large", 11)])
def test_zoo_model_exported_at_an_old_opset_matches_pytorch(name, opset, tmp_path):
    info = export_models.export_model(name, tmp_path, zoo_models, opset)
    assert info["opset"] == opset
    model = onnx.load(str(tmp_path / f"{name}.onnx"))
    assert [e.version for e in model.opset_import if e.domain in ("", "ai.onnx")] == [opset]
    x = np.load(tmp_path / f"{name}.input.npy")
    expected = np.load(tmp_path / f"{name}.expected.npy")
    mod = sy.frontend.from_onnx(tmp_path / f"{name}.onnx")
    sy.build(mod, ["cpu:0"], tmp_path / "artifact")
    actual = np.asarray(sy.runtime.load(tmp_path / "artifact").run(**{info["input"]: x}))
    assert actual.shape == expected.shape
    error = float(np.abs(actual - expected).max() / max(np.abs(expected).max(), 1e-30))
    print(f"{name} at opset {opset}: relative error {error:.2e}")
    assert error <= TOLERANCE, f"{name} at opset {opset}: relative error {error:.2e}"
    assert json.loads((tmp_path / f"{name}.json").read_text())["opset"] == opset


class _EinsumModels:
    """A one-model set (the interface of zoo_models.py) that PyTorch 1.13
    exports only from opset 12: its einsum."""

    MODELS = {"bilinear": None}

    @staticmethod
    def build_model(name):
        import torch

        class Bilinear(torch.nn.Module):
            def forward(self, x):
                return torch.einsum("ij,kj->ik", x, x)

        return Bilinear().eval()

    @staticmethod
    def make_input(name):
        return np.arange(6, dtype=np.float32).reshape(2, 3)


def test_a_model_the_exporter_refuses_at_an_opset_is_its_refusal(tmp_path):
    with pytest.raises(export_models.ExporterRefusal, match="einsum"):
        export_models.export_model("bilinear", tmp_path, _EinsumModels, 9)
    assert not list(tmp_path.iterdir())  # nothing half-written
    assert export_models.export_model("bilinear", tmp_path, _EinsumModels, 12)["opset"] == 12
