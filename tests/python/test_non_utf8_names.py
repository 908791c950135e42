# Names from a model file may hold any bytes (issue 41): a node name, an input
# name or the model's file name with a byte that is not UTF-8 imported and
# ran in run-ir, but `compile` died with the JSON library's raw message. Each
# such byte is now written "\xHH" wherever the text reaches JSON, Python or a
# message, and the compile succeeds.
import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import switchyard as sy
from test_onnx_import import dense_relu_model, reference

REPO = pathlib.Path(__file__).resolve().parents[2]
SWITCHYARD = pathlib.Path(os.environ.get("SY_BUILD_DIR", REPO / "build")) / "bin" / "switchyard"


def with_bytes(model, replacements):
    """The serialised model with each (ascii placeholder, bytes) replaced: ONNX's
    Python API refuses to make such names, protobuf's parser does not."""
    data = model.SerializeToString()
    for placeholder, raw in replacements:
        assert len(placeholder) == len(raw) and placeholder in data
        data = data.replace(placeholder, raw)
    return data


def run_cli(*args):
    return subprocess.run([str(SWITCHYARD), *map(os.fsencode, args)], capture_output=True, timeout=300)


@pytest.fixture
def model():
    model = dense_relu_model()
    model.graph.node[2].name = "layer/reluQQ"
    return model


def test_a_node_name_that_is_not_utf8_compiles_and_runs(tmp_path, model):
    path = tmp_path / "m.onnx"
    path.write_bytes(with_bytes(model, [(b"reluQQ", b"relu\xff\xfe")]))
    x = np.random.default_rng(3).standard_normal((2, 4)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    compiled = run_cli("compile", path, "-o", tmp_path / "art")
    assert compiled.returncode == 0, compiled.stderr.decode(errors="replace")
    manifest = json.loads((tmp_path / "art" / "manifest.json").read_text(encoding="utf-8"))
    spans = [k["span"] for k in manifest["kernels"]]
    assert any("layer/relu\\xff\\xfe" in s for s in spans), spans
    ran = run_cli("run", tmp_path / "art", "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", tmp_path / "out")
    assert ran.returncode == 0, ran.stderr.decode(errors="replace")
    output = manifest["outputs"][0]["name"]  # the ONNX graph's output name
    np.testing.assert_allclose(np.load(tmp_path / "out" / f"{output}.npy"), reference(model, x), rtol=1e-5, atol=1e-6)
    # And through the Python API.
    module = sy.frontend.from_onnx(path)
    sy.build(module, devices=["cpu:0"], output=tmp_path / "py_art")
    np.testing.assert_allclose(sy.runtime.load(tmp_path / "py_art").run(x=x), reference(model, x), rtol=1e-5,
                               atol=1e-6)


def test_an_input_name_and_a_file_name_that_are_not_utf8_compile(tmp_path, model):
    for node in model.graph.node:
        node.input[:] = ["inQ" if name == "x" else name for name in node.input]
    model.graph.input[0].name = "inQ"
    path = pathlib.Path(os.fsdecode(bytes(tmp_path) + b"/model\xff.onnx"))
    path.write_bytes(with_bytes(model, [(b"inQ", b"in\xe9")]))
    compiled = run_cli("compile", path, "-o", tmp_path / "art")
    assert compiled.returncode == 0, compiled.stderr.decode(errors="replace")
    manifest = json.loads((tmp_path / "art" / "manifest.json").read_text(encoding="utf-8"))
    assert [t["name"] for t in manifest["inputs"]] == ["in\\xe9"]
    x = np.ones((2, 4), np.float32)
    out = sy.runtime.load(tmp_path / "art").run(**{"in\\xe9": x})
    np.testing.assert_allclose(out, reference(model, x), rtol=1e-5)
    # An error naming the input is text Python can hold.
    model.graph.input[0].type.tensor_type.ClearField("shape")
    unshaped = tmp_path / "unshaped.onnx"
    unshaped.write_bytes(with_bytes(model, [(b"inQ", b"in\xe9")]))
    with pytest.raises(sy.ParseError, match=r"input 'in\\xe9' has no declared shape"):
        sy.frontend.from_onnx(unshaped)


def test_a_text_ir_file_whose_name_is_not_utf8_compiles(tmp_path):
    path = pathlib.Path(os.fsdecode(bytes(tmp_path) + b"/model\xff.sy"))
    path.write_text("def @main(%x: Tensor[(4), float32]) {\n  negative(%x)\n}\n")
    compiled = run_cli("compile", path, "-o", tmp_path / "art")
    assert compiled.returncode == 0, compiled.stderr.decode(errors="replace")
    manifest = json.loads((tmp_path / "art" / "manifest.json").read_text(encoding="utf-8"))
    assert "/model\\xff.sy:2:3" in manifest["kernels"][0]["span"], manifest["kernels"]
