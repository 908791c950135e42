"""Runs in chunks (issue 37): a specialised artifact runs values no program was compiled for.

`switchyard compile --specialize n=1,4` of a model whose operators keep the
entries of `n` apart runs n = 3, 6 or 11 as a sum of compiled values (11 =
4 + 4 + 1 + 1 + 1), each a run of its program on a slice of the inputs, and
gives what the interpreter gives, from Python, the C API's path and the
command line; slices along an axis that is not the outermost are gathered
and scattered. A model that mixes the entries (softmax across the batch) is
refused a value it was not compiled for, with the node that mixes them.
"""
import json
import os
import pathlib
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import switchyard as sy

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("SY_BUILD_DIR", REPO / "build"))
SWITCHYARD = BUILD / "bin" / "switchyard"


def run_cli(*args):
    return subprocess.run([str(SWITCHYARD), *map(str, args)], capture_output=True, text=True)


def save(path, nodes, inputs, outputs, initializers):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializers)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return path


def conv_dense(path):
    """relu(conv(x) + b), max pool, flatten, matmul over a symbolic batch n."""
    rng = np.random.default_rng(5)
    initializers = [numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
                    for name, shape in [("w", (8, 3, 3, 3)), ("b", (8,)), ("d", (128, 4))]]
    initializers.append(numpy_helper.from_array(np.array([-1, 128], np.int64), "shape"))
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Reshape", ["p", "shape"], ["f"], name="flatten"),
             helper.make_node("MatMul", ["f", "d"], ["y"], name="dense")]
    return save(path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, 8, 8])],
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])], initializers)


def sequence_first(path):
    """x (5, n, 16) @ w + bias, softmax over features; outputs (n, 5, 8) and (5, n, 8).

    n is axis 1 of x and of z: their chunks are not one run of bytes.
    """
    w = numpy_helper.from_array(np.random.default_rng(6).standard_normal((16, 8)).astype(np.float32), "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["a"], name="project"),
             helper.make_node("Add", ["a", "bias"], ["ab"], name="bias"),
             helper.make_node("Softmax", ["ab"], ["z"], name="softmax", axis=-1),
             helper.make_node("Transpose", ["z"], ["y"], name="batch_first", perm=[1, 0, 2])]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, "n", 16]),
              helper.make_tensor_value_info("bias", TensorProto.FLOAT, [8])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 5, 8]),
               helper.make_tensor_value_info("z", TensorProto.FLOAT, [5, "n", 8])]
    return save(path, nodes, inputs, outputs, [w])


def batch_softmax(path):
    """softmax across the batch: every output entry reads every input entry."""
    nodes = [helper.make_node("Softmax", ["x"], ["y"], name="across_batch", axis=0)]
    return save(path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])], [])


def compiled(root, name, make, values):
    path = make(root / f"{name}.onnx")
    art = root / f"{name}.art"
    built = run_cli("compile", path, "--specialize", values, "-o", art)
    assert built.returncode == 0, built.stderr
    return sy.frontend.from_onnx(path), art, built.stdout


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("chunked")


def test_values_not_compiled_run_as_sums_of_compiled_ones(root):
    mod, art, stdout = compiled(root, "conv_dense", conv_dense, "n=1,4")
    assert "n: any value, as a sum of compiled ones run one after another (along x axis 0, y axis 0)" in stdout, stdout
    manifest = json.loads((art / "manifest.json").read_text())
    assert manifest["chunking"] == [{"dim": "n", "input_axes": [0], "output_axes": [0]}]
    model = sy.runtime.load(art)
    for batch in (3, 6, 11, 4, 1):
        x = np.random.default_rng(batch).standard_normal((batch, 3, 8, 8)).astype(np.float32)
        assert model._artifact.output_shapes_for([[batch, 3, 8, 8]]) == [[batch, 4]]
        y = model.run(x=x)
        assert y.shape == (batch, 4)
        np.testing.assert_allclose(y, sy.evaluate(mod, x=x), rtol=1e-4, atol=1e-4)
        model.set_input("x", x)
        np.testing.assert_array_equal(model.run(), y)
    # 11 = 4 + 4 + 1 + 1 + 1: five program runs, each with its program's kernels.
    kernels = {}
    for batch in (1, 4, 11):
        model.run(x=np.zeros((batch, 3, 8, 8), np.float32))
        kernels[batch] = len(model.last_stats.kernels)
    assert kernels[11] == 2 * kernels[4] + 3 * kernels[1], kernels
    inspected = run_cli("inspect", art)
    assert inspected.returncode == 0, inspected.stderr
    assert "n: any value, as a sum of compiled ones" in inspected.stdout, inspected.stdout
    # The command line writes the whole run's outputs.
    x = np.random.default_rng(7).standard_normal((6, 3, 8, 8)).astype(np.float32)
    np.save(root / "x6.npy", x)
    ran = run_cli("run", art, "--input", f"x={root / 'x6.npy'}", "--output-dir", root / "out6")
    assert ran.returncode == 0, ran.stderr
    np.testing.assert_allclose(np.load(root / "out6" / "y.npy"), sy.evaluate(mod, x=x), rtol=1e-4, atol=1e-4)


def test_chunks_along_an_inner_axis_are_gathered_and_scattered(root):
    mod, art, stdout = compiled(root, "sequence_first", sequence_first, "n=2,3")
    assert "(along x axis 1, y axis 0, z axis 1)" in stdout, stdout
    model = sy.runtime.load(art)
    rng = np.random.default_rng(8)
    bias = rng.standard_normal(8).astype(np.float32)
    for batch in (5, 7, 4):
        x = rng.standard_normal((5, batch, 16)).astype(np.float32)
        y, z = model.run(x=x, bias=bias)
        want_y, want_z = sy.evaluate(mod, x=x, bias=bias)
        assert y.shape == (batch, 5, 8) and z.shape == (5, batch, 8)
        np.testing.assert_allclose(y, want_y, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(z, want_z, rtol=1e-5, atol=1e-6)
    # 1 is no sum of 2 and 3: refused, naming why.
    with pytest.raises(sy.RuntimeError, match=r"n=1 cannot run in chunks: it is not a sum of 2, 3"):
        model.run(x=np.zeros((5, 1, 16), np.float32), bias=bias)


def test_a_model_that_mixes_the_batch_runs_only_its_compiled_values(root):
    _, art, stdout = compiled(root, "batch_softmax", batch_softmax, "n=1,2")
    assert "n: only the compiled values (nn.softmax(%x) at across_batch: normalises along axis 0, which holds n)" in \
        stdout, stdout
    model = sy.runtime.load(art)
    with pytest.raises(sy.RuntimeError) as refused:
        model.run(x=np.zeros((3, 4), np.float32))
    assert str(refused.value) == (
        "input 'x' dimension 0 (n) is 3, but this artifact was compiled only for n=1; n=2 (switchyard compile "
        "--specialize); n cannot run in chunks: nn.softmax(%x) at across_batch: normalises along axis 0, which holds n")


def test_a_torch_transformer_runs_batches_it_was_not_compiled_for(root):
    """nn.TransformerEncoder exported sequence-first: heads inside the batch axis, the batch inside rows."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0)
    encoder = torch.nn.TransformerEncoder(layer, 2).eval()
    path = root / "encoder.onnx"
    torch.onnx.export(encoder, torch.randn(8, 2, 32), str(path), input_names=["x"], output_names=["y"],
                      opset_version=13, dynamic_axes={"x": {0: "seq", 1: "batch"}, "y": {0: "seq", 1: "batch"}})
    art = root / "encoder.art"
    built = run_cli("compile", path, "--specialize", "batch=1,2", "--specialize", "seq=8", "-o", art)
    assert built.returncode == 0, built.stderr
    assert "batch: any value, as a sum of compiled ones run one after another (along x axis 1, y axis 1)" in \
        built.stdout, built.stdout
    assert "seq: only the compiled values (" in built.stdout and "holds seq more than once" in built.stdout
    model = sy.runtime.load(art)
    for batch in (3, 5):
        x = np.random.default_rng(batch).standard_normal((8, batch, 32)).astype(np.float32)
        with torch.no_grad():
            want = encoder(torch.from_numpy(x)).numpy()
        np.testing.assert_allclose(model.run(x=x), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_recurrent_layers_take_a_symbolic_batch(root, kind):
    """torch's LSTM and GRU exported with a dynamic batch: imported, run in chunks, matched against torch."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    layer = getattr(torch.nn, kind)(8, 16, num_layers=2).eval()
    outputs = ["y", "h"] + (["c"] if kind == "LSTM" else [])
    path = root / f"{kind}.onnx"
    torch.onnx.export(layer, torch.randn(4, 2, 8), str(path), input_names=["x"], output_names=outputs,
                      opset_version=14, dynamic_axes={"x": {1: "batch"}, "y": {1: "batch"}})
    art = root / f"{kind}.art"
    built = run_cli("compile", path, "--specialize", "batch=1,2", "-o", art)
    assert built.returncode == 0, built.stderr
    assert "batch: any value, as a sum of compiled ones" in built.stdout, built.stdout
    model, mod = sy.runtime.load(art), sy.frontend.from_onnx(path)
    x = np.random.default_rng(3).standard_normal((4, 3, 8)).astype(np.float32)
    with torch.no_grad():
        y, state = layer(torch.from_numpy(x))
    want = [y.numpy()] + [s.numpy() for s in (state if kind == "LSTM" else (state,))]
    for got in (model.run(x=x), sy.evaluate(mod, x=x)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    # The sequence is unrolled: a symbolic one is refused by node.
    torch.onnx.export(layer, torch.randn(4, 2, 8), str(root / "seq.onnx"), input_names=["x"], output_names=outputs,
                      opset_version=14, dynamic_axes={"x": {0: "seq"}})
    with pytest.raises(sy.Error, match=f"X's sequence length 'seq' is symbolic: {kind} unrolls over a static sequence"):
        sy.frontend.from_onnx(root / "seq.onnx")


def test_bad_inputs_to_a_run_in_chunks_are_named_at_the_runs_shapes(root):
    _, art, _ = compiled(root, "conv_dense_bad", conv_dense, "n=1,4")
    model = sy.runtime.load(art)
    with pytest.raises(sy.Error, match=r"input 'x': expected Tensor\[\(\?, 3, 8, 8\), float32\], got Tensor\[\(3, 3, 8, 8\), float64\]"):
        model.run(x=np.zeros((3, 3, 8, 8), np.float64))
    with pytest.raises(sy.Error, match=r"input 'x'"):
        model.run(x=np.zeros((3, 3, 8, 9), np.float32))
    outputs = [np.zeros((3, 5), np.float32)]
    with pytest.raises(sy.Error, match=r"output 'y': expected"):
        model._artifact.run_into({"x": np.zeros((3, 3, 8, 8), np.float32)}, outputs, False)
