# An ONNX graph's output names are the artifact's output names: in the
# manifest, `output_names`, `get_output(name)` and the files `switchyard run`
# writes (issue 39: every output was output_<i>, so get_output("output")
# failed). docs/onnx.md says what happens to names that are empty, repeated
# or no file name.
import json
import os
import pathlib
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import switchyard as sy

REPO = pathlib.Path(__file__).resolve().parents[2]
SWITCHYARD = pathlib.Path(os.environ.get("SY_BUILD_DIR", REPO / "build")) / "bin" / "switchyard"


def two_output_model(path, names):
    """Outputs relu(x) and -x of x: (2, 3), named `names`."""
    nodes = [helper.make_node("Relu", ["x"], [names[0]], name="relu"),
             helper.make_node("Neg", ["x"], [names[1]], name="neg")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3]) for n in names])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return path


X = np.array([[-1.5, 0.0, 2.0], [3.0, -0.25, 1.0]], np.float32)


def test_get_output_by_the_onnx_name(tmp_path):
    path = two_output_model(tmp_path / "m.onnx", ["output", "negated"])
    sy.build(sy.frontend.from_onnx(path), ["cpu:0"], tmp_path / "art")
    model = sy.runtime.load(tmp_path / "art")
    assert model.output_names == ["output", "negated"]
    assert [t["name"] for t in json.loads((tmp_path / "art" / "manifest.json").read_text())["outputs"]] == \
        ["output", "negated"]
    model.run(x=X)
    np.testing.assert_array_equal(model.get_output("output"), np.maximum(X, 0))
    np.testing.assert_array_equal(model.get_output("negated"), -X)


def test_the_names_survive_the_text_form_and_planning(tmp_path):
    mod = sy.frontend.from_onnx(two_output_model(tmp_path / "m.onnx", ["logits:0", "probs"]))
    text = str(mod)
    assert 'output_names=["logits:0", "probs"]' in text.split("{")[0], text
    parsed = sy.parse(text, source_name="m.sy")
    assert sy.ir.structural_equal(parsed, mod, compare_spans=False)
    planned = sy.transform.Sequential([sy.transform.InferType(), sy.transform.PlanDevices(["cpu:0", "cpu:1"])])(parsed)
    sy.build(planned, ["cpu:0", "cpu:1"], tmp_path / "art")
    assert sy.runtime.load(tmp_path / "art").output_names == ["logits:0", "probs"]


def test_empty_and_repeated_names_are_made_distinct(tmp_path):
    # ONNX lets one value be listed twice; a name may be empty.
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3]) for n in ["y", "y"]]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])], outputs)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(tmp_path / "twice.onnx"))
    assert 'output_names=["y", "y_1"]' in str(sy.frontend.from_onnx(tmp_path / "twice.onnx"))


def test_a_wrong_output_names_attribute_fails_the_build_naming_it(tmp_path):
    mod = sy.parse('def @main(%x: Tensor[(3), float32], output_names=["a"]) {\n  (negative(%x), %x)\n}\n',
                   source_name="wrong.sy")
    with pytest.raises(sy.TypeInferenceError,
                       match=r'function attribute output_names=\["a"\]: names 1 outputs, but the function has 2'):
        sy.build(mod, ["cpu:0"], tmp_path / "art")
    assert not (tmp_path / "art").exists()


@pytest.mark.skipif(not SWITCHYARD.exists(), reason="the switchyard CLI is not built")
def test_the_cli_writes_each_output_under_its_name(tmp_path):
    path = two_output_model(tmp_path / "m.onnx", ["logits:0", "output"])
    np.save(tmp_path / "x.npy", X)
    compiled = subprocess.run([str(SWITCHYARD), "compile", str(path), "-o", str(tmp_path / "art")],
                              capture_output=True, text=True, timeout=300)
    assert compiled.returncode == 0, compiled.stderr
    ran = subprocess.run([str(SWITCHYARD), "run", str(tmp_path / "art"), "--input", f"x={tmp_path / 'x.npy'}",
                          "--output-dir", str(tmp_path / "out")], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert lines[0].startswith("logits:0 (logits_0.npy, output_0.npy): Tensor[(2, 3), float32]"), lines[0]
    assert lines[1].startswith("output (output.npy, output_1.npy): Tensor[(2, 3), float32]"), lines[1]
    # By name, and by position as scripts (and the command-line contract) read them.
    files = ["logits_0.npy", "output.npy", "output_0.npy", "output_1.npy"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == files
    for name, position, expected in [("logits_0", 0, np.maximum(X, 0)), ("output", 1, -X)]:
        np.testing.assert_array_equal(np.load(tmp_path / "out" / f"{name}.npy"), expected)
        np.testing.assert_array_equal(np.load(tmp_path / "out" / f"output_{position}.npy"), expected)
    interpreted = subprocess.run([str(SWITCHYARD), "run-ir", str(path), "--input", f"x={tmp_path / 'x.npy'}",
                                  "--output-dir", str(tmp_path / "interpreted")], capture_output=True, text=True,
                                 timeout=60)
    assert interpreted.returncode == 0, interpreted.stderr
    assert sorted(p.name for p in (tmp_path / "interpreted").iterdir()) == files
