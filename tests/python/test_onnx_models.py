# The model suite end to end: each torchvision/PyTorch model exported to
# ONNX (tests/models/export_models.py, generated on demand into a cache
# folder) is imported, compiled for one CPU device and split across two, run,
# and compared with PyTorch's output. The split builds must copy exactly the
# tensors that cross the cut, and `explain` must name the rule that placed a
# node of the second half.
import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import switchyard as sy
from switchyard import ir

REPO = pathlib.Path(__file__).resolve().parents[2]
SWITCHYARD = pathlib.Path(os.environ.get("SY_BUILD_DIR", REPO / "build")) / "bin" / "switchyard"

# Per model: rules that pin its first and last parts to different devices;
# planning places everything between to copy the fewest bytes.
SPLITS = {
    "mlp": ["node:/0/*=cpu:0", "node:/4/*=cpu:1"],
    "resnet18": ["node:/conv1/*=cpu:0", "node:/layer4/*=cpu:1"],
    "resnet50": ["node:/conv1/*=cpu:0", "node:/layer4/*=cpu:1"],
    "mobilenet_v2": ["node:/features/features.0/*=cpu:0", "node:/features/features.1[4-8]/*=cpu:1"],
    "encoder": ["node:/layers.0/*=cpu:0", "node:/layers.3/*=cpu:1"],
}
TOLERANCE = 1e-4  # relative to the output's largest magnitude


def relative_error(actual, expected):
    return float(np.abs(actual - expected).max() / np.abs(expected).max())


class NodeDevices(ir.ExprVisitor):
    """The device of each ONNX node's calls, by node name (the calls' span)."""

    def __init__(self):
        super().__init__()
        self.devices = {}

    def visit_call(self, node):
        if node.op.name != "device_copy":
            self.devices.setdefault(str(node.span), set()).add(str(node.virtual_device))
        super().visit_call(node)


def crossing_tensors(onnx_path, node_devices):
    """Tensors of the ONNX graph whose consumers include another device than
    their producer, counted once per destination device."""
    import onnx
    graph = onnx.load(str(onnx_path), load_external_data=False).graph
    producer = {}
    for node in graph.node:
        for out in node.output:
            producer[out] = node.name
    crossings = set()
    for node in graph.node:
        for name in node.input:
            source = producer.get(name)
            if source is None or source not in node_devices or node.name not in node_devices:
                continue  # a graph input, an initializer, or a node folded away at import
            for device in node_devices[node.name] - node_devices[source]:
                crossings.add((name, device))
    return crossings


def assert_arenas_near_the_bound(name, report):
    """Issue 10's aim: each device's arena within 1.1x of the planner's lower
    bound (the most bytes live at one step)."""
    for m in report.memory:
        print(f"{name}: {m['device']} arena {m['planned_bytes']} bytes, lower bound {m['lower_bound_bytes']}")
        assert m["lower_bound_bytes"] <= m["planned_bytes"] <= 1.1 * m["lower_bound_bytes"], m


@pytest.mark.parametrize("name", list(SPLITS))
def test_model_matches_pytorch_on_one_and_two_devices(suite, name, tmp_path):
    info = json.loads((suite / f"{name}.json").read_text())
    onnx_path = suite / f"{name}.onnx"
    x = np.load(suite / f"{name}.input.npy")
    expected = np.load(suite / f"{name}.expected.npy")
    mod = sy.frontend.from_onnx(onnx_path)

    report = sy.build(mod, ["cpu:0"], tmp_path / "one")
    assert_arenas_near_the_bound(name, report)
    single = sy.runtime.load(tmp_path / "one").run(**{info["input"]: x})
    error = relative_error(np.asarray(single), expected)
    print(f"{name}: one device, relative error {error:.2e}")
    assert error <= TOLERANCE

    rules = SPLITS[name]
    report = sy.build(mod, ["cpu:0", "cpu:1"], tmp_path / "two", place=rules)
    assert_arenas_near_the_bound(name, report)
    split = sy.runtime.load(tmp_path / "two").run(**{info["input"]: x})
    error = relative_error(np.asarray(split), expected)
    print(f"{name}: split, relative error {error:.2e}")
    assert error <= TOLERANCE

    planned = sy.transform.Sequential([
        sy.transform.InferType(), sy.transform.PlanDevices(devices=["cpu:0", "cpu:1"], place=rules)])(mod)
    visitor = NodeDevices()
    visitor.visit(planned["main"].body)
    assert {"cpu:0", "cpu:1"} <= set().union(*visitor.devices.values()), "the split uses both devices"
    manifest = json.loads((tmp_path / "two" / "manifest.json").read_text())
    expected_copies = crossing_tensors(onnx_path, visitor.devices)
    print(f"{name}: {len(manifest['copies'])} copies, {len(expected_copies)} tensors cross the cut")
    assert len(manifest["copies"]) == len(expected_copies) > 0


def test_explain_names_the_rule_that_placed_a_node(suite):
    rules = SPLITS["resnet18"]
    args = [str(SWITCHYARD), "explain", str(suite / "resnet18.onnx"), "--devices", "cpu:0,cpu:1",
            "--node", "/layer4/layer4.1/conv2/Conv"]
    for rule in rules:
        args += ["--place", rule]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    assert "nn.conv2d (/layer4/layer4.1/conv2/Conv) is placed on cpu:1" in out
    assert "by placement rule 'node:/layer4/*=cpu:1'" in out


@pytest.mark.parametrize("name", ["mlp", "resnet18"])
def test_a_model_the_user_planned_builds_like_the_unplanned_one(suite, name, tmp_path):
    """Issue 39: a module planned with a rule and then built (the build plans
    it again) moved its weights off their kernels' device and failed while
    writing the manifest."""
    info = json.loads((suite / f"{name}.json").read_text())
    x = np.load(suite / f"{name}.input.npy")
    mod = sy.frontend.from_onnx(suite / f"{name}.onnx")
    devices, rules = ["cpu:0", "cpu:1"], SPLITS[name]
    sy.build(mod, devices, tmp_path / "unplanned", place=rules)
    planned = sy.transform.Sequential([
        sy.transform.InferType(), sy.transform.PlanDevices(devices=devices, place=rules)])(mod)
    sy.build(planned, devices, tmp_path / "planned")
    unplanned_out = sy.runtime.load(tmp_path / "unplanned").run(**{info["input"]: x})
    planned_out = sy.runtime.load(tmp_path / "planned").run(**{info["input"]: x})
    np.testing.assert_array_equal(np.asarray(planned_out), np.asarray(unplanned_out))
