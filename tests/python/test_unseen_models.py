# Networks beyond the model suite (tests/models/unseen_models.py: one per
# operator family the suite lacks), exported to ONNX, compiled for one CPU
# device and split across two, run, and compared with PyTorch within 1e-4
# of the output's largest magnitude. The split puts the first half of the
# model's operator calls on cpu:0 and the rest on cpu:1, so values cross.
import pathlib
import sys

import numpy as np
import pytest

import switchyard as sy

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "models"))
torch = pytest.importorskip("torch", reason="the unseen models need Debian's python3-torch")
pytest.importorskip("torchvision", reason="the unseen models need Debian's python3-torchvision")
import unseen_models  # noqa: E402

TOLERANCE = 1e-4  # relative to the output's largest magnitude


class SplitInHalves(sy.ir.ExprMutator):
    """Places the first half of the calls (in evaluation order) on cpu:0 and
    the rest on cpu:1; planning inserts the copies between them."""

    def __init__(self, calls):
        super().__init__()
        self.calls = calls
        self.seen = 0

    def visit_call(self, call):
        call = super().visit_call(call)
        self.seen += 1
        return call.with_fields(virtual_device="cpu:0" if self.seen <= self.calls // 2 else "cpu:1")


class CountCalls(sy.ir.ExprVisitor):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def visit_call(self, call):
        self.calls += 1
        super().visit_call(call)


def split_in_halves(mod):
    counter = CountCalls()
    counter.visit(mod["main"])
    return sy.IRModule({"main": SplitInHalves(counter.calls).visit(mod["main"])})


def relative_error(actual, expected):
    return float(np.abs(actual - expected).max() / max(np.abs(expected).max(), 1e-30))


@pytest.mark.parametrize("name", list(unseen_models.MODELS))
def test_unseen_model_matches_pytorch_compiled_on_one_and_two_devices(name, tmp_path):
    model, inputs = unseen_models.build(name)
    with torch.no_grad():
        expected = model(*inputs).numpy()
    names = [f"input{i}" for i in range(len(inputs))]
    path = tmp_path / f"{name}.onnx"
    torch.onnx.export(model, tuple(inputs), str(path), opset_version=13, input_names=names, output_names=["output"])
    feeds = {n: t.numpy() for n, t in zip(names, inputs)}
    mod = sy.frontend.from_onnx(path)

    for devices, built in ((["cpu:0"], mod), (["cpu:0", "cpu:1"], split_in_halves(mod))):
        out = tmp_path / "-".join(d.replace(":", "") for d in devices)
        report = sy.build(built, devices, out)
        actual = np.asarray(sy.runtime.load(out).run(**feeds))
        error = relative_error(actual, expected)
        print(f"{name} on {','.join(devices)}: {report.summary()}; relative error {error:.2e}")
        assert actual.shape == expected.shape
        assert error <= TOLERANCE, f"{name} on {devices}: relative error {error:.2e}"
        if len(devices) == 2:
            assert report.copies, f"{name}: the split copies nothing"
