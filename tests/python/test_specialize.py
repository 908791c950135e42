"""Specialised artifacts (issue 37, step 3): `switchyard compile --specialize n=1,2,4`.

One artifact holds a compiled program per value of a symbolic dimension (per
combination, with several dimensions), the weights stored once; each run
picks the program its inputs' shapes fit, from Python, the C API and the
command line, and reports the outputs at their actual shapes; a shape no
program takes is refused naming the input, the dimension, its value and the
specialisations there are.
"""
import ctypes
import json
import os
import pathlib
import subprocess

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

import switchyard as sy

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("SY_BUILD_DIR", REPO / "build"))
SWITCHYARD = BUILD / "bin" / "switchyard"


def run_cli(*args):
    return subprocess.run([str(SWITCHYARD), *map(str, args)], capture_output=True, text=True)


def conv_dense_symbolic(path):
    """relu(conv(x) + b), max pool, flatten, matmul; the batch `n` symbolic."""
    rng = np.random.default_rng(3)
    initializers = [numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
                    for name, shape in [("w", (8, 3, 3, 3)), ("b", (8,)), ("d", (128, 4))]]
    initializers.append(numpy_helper.from_array(np.array([-1, 128], np.int64), "shape"))
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="stem/conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="stem/relu"),
             helper.make_node("MaxPool", ["r"], ["p"], name="stem/pool", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Reshape", ["p", "shape"], ["f"], name="head/flatten"),
             helper.make_node("MatMul", ["f", "d"], ["y"], name="head/dense")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])], initializers)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return path


def tree_bytes(path):
    return sum(f.stat().st_size for f in pathlib.Path(path).rglob("*") if f.is_file())


@pytest.fixture(scope="module")
def conv_dense(tmp_path_factory):
    """The model, its symbolic import, and an artifact specialised for n = 1, 2, 4."""
    root = tmp_path_factory.mktemp("specialize")
    path = conv_dense_symbolic(root / "conv_dense.onnx")
    art = root / "conv_dense.art"
    built = run_cli("compile", path, "--specialize", "n=1,2,4", "-o", art)
    assert built.returncode == 0, built.stderr
    assert "3 programs, 3 sharing one weights.bin" in built.stdout, built.stdout
    return path, sy.frontend.from_onnx(path), art


def test_each_batch_runs_its_program_and_matches_the_interpreter(conv_dense):
    _, mod, art = conv_dense
    model = sy.runtime.load(art)
    assert model.specializations == ["n=1", "n=2", "n=4"]
    for batch in (1, 2, 4):
        x = np.random.default_rng(batch).standard_normal((batch, 3, 8, 8)).astype(np.float32)
        y = model.run(x=x)
        assert y.shape == (batch, 4)
        np.testing.assert_allclose(y, sy.evaluate(mod, x=x), rtol=1e-4, atol=1e-4)
        model.set_input("x", x)  # the executor style takes any admissible shape too
        np.testing.assert_allclose(model.run(), y, rtol=0, atol=0)


def test_python_build_specializes_as_the_cli_does(conv_dense, tmp_path):
    path, mod, _ = conv_dense
    report = sy.build(mod, ["cpu:0"], tmp_path / "py.art", specialize={"n": [2, 4]})
    assert report.names == ["n=2", "n=4"] and report.shared_weights == 2, report
    assert len(report.programs) == 2 and all(p.kernel_calls > 0 for p in report.programs), report
    model = sy.runtime.load(tmp_path / "py.art")
    assert model.specializations == ["n=2", "n=4"]
    for batch in (2, 4):
        x = np.random.default_rng(20 + batch).standard_normal((batch, 3, 8, 8)).astype(np.float32)
        np.testing.assert_allclose(model.run(x=x), sy.evaluate(mod, x=x), rtol=1e-4, atol=1e-4)
    with pytest.raises(sy.RuntimeError, match=r"dimension 0 \(n\) is 1, but this artifact was compiled only for n=2; n=4"):
        model.run(x=np.zeros((1, 3, 8, 8), np.float32))
    # Bad values are named as the flag's are; a dimension @main lacks too.
    with pytest.raises(TypeError, match=r"specialize\[n\] entries must be int, got str"):
        sy.build(mod, ["cpu:0"], tmp_path / "bad.art", specialize={"n": ["2"]})
    with pytest.raises(TypeError, match="specialize must be a dict"):
        sy.build(mod, ["cpu:0"], tmp_path / "bad.art", specialize="n=1")
    with pytest.raises(sy.UsageError, match="n=2,2"):
        sy.build(mod, ["cpu:0"], tmp_path / "bad.art", specialize={"n": [2, 2]})
    with pytest.raises(sy.UsageError, match="@main's inputs have no dimension m"):
        sy.build(mod, ["cpu:0"], tmp_path / "bad.art", specialize={"m": [2]})
    assert not (tmp_path / "bad.art").exists()


def test_a_batch_no_program_takes_is_refused_by_input_dimension_and_value(conv_dense, tmp_path):
    _, _, art = conv_dense
    model = sy.runtime.load(art)
    # Other batches run in chunks of the compiled ones (test_chunked_runs.py); none is made of nothing.
    message = ("input 'x' dimension 0 (n) is 0, but this artifact was compiled only for n=1; n=2; n=4 "
               "(switchyard compile --specialize)")
    with pytest.raises(sy.RuntimeError) as refused:
        model.run(x=np.zeros((0, 3, 8, 8), np.float32))
    assert str(refused.value) == message
    with pytest.raises(sy.UsageError, match=r"input 'x': expected Tensor\[\(n, 3, 8, 8\), float32\]"):
        model.set_input("x", np.zeros((2, 3, 9, 8), np.float32))
    np.save(tmp_path / "x.npy", np.zeros((0, 3, 8, 8), np.float32))
    ran = run_cli("run", art, "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", tmp_path / "out")
    assert ran.returncode == 1
    assert message in ran.stderr
    assert not (tmp_path / "out").exists()


def test_the_weights_are_stored_once(conv_dense, tmp_path):
    path, _, art = conv_dense
    manifest = json.loads((art / "manifest.json").read_text())
    assert manifest["format_version"] == 9
    assert [s["shared_weights"] for s in manifest["specializations"]] == [True, True, True]
    assert (art / "weights.bin").is_file()
    assert not any((art / name / "weights.bin").exists() for name in ("n=1", "n=2", "n=4"))
    static = tmp_path / "static.art"
    built = run_cli("compile", path, "--input-shape", "x=4x3x8x8", "-o", static)
    assert built.returncode == 0, built.stderr
    assert (art / "weights.bin").stat().st_size == (static / "weights.bin").stat().st_size


def test_the_cli_runs_every_batch_and_inspect_shows_the_symbolic_signature(conv_dense, tmp_path):
    _, mod, art = conv_dense
    for batch in (1, 4):
        x = np.random.default_rng(10 + batch).standard_normal((batch, 3, 8, 8)).astype(np.float32)
        np.save(tmp_path / "x.npy", x)
        ran = run_cli("run", art, "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", tmp_path / "out")
        assert ran.returncode == 0, ran.stderr
        y = np.load(tmp_path / "out" / "y.npy")
        assert y.shape == (batch, 4)
        np.testing.assert_allclose(y, sy.evaluate(mod, x=x), rtol=1e-4, atol=1e-4)
    # One program alone runs too, reading the weights its artifact stores once.
    x = np.random.default_rng(30).standard_normal((2, 3, 8, 8)).astype(np.float32)
    np.save(tmp_path / "x2.npy", x)
    for program in (art / "n=2", str(art / "n=2") + "/"):
        ran = run_cli("run", program, "--input", f"x={tmp_path / 'x2.npy'}", "--output-dir", tmp_path / "alone")
        assert ran.returncode == 0, ran.stderr
        np.testing.assert_allclose(np.load(tmp_path / "alone" / "y.npy"), sy.evaluate(mod, x=x), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(sy.runtime.load(art / "n=2").run(x=x), sy.evaluate(mod, x=x), rtol=1e-4, atol=1e-4)
    shown = run_cli("inspect", art)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert "  input  x: Tensor[(n, 3, 8, 8), float32]" in lines
    assert "  output y: Tensor[(n, 4), float32]" in lines
    assert [line.split(":")[0] for line in lines if line.startswith("  specialisation")] == [
        "  specialisation n=1", "  specialisation n=2", "  specialisation n=4"]


def test_the_c_api_gives_symbolic_shapes_and_the_shapes_of_a_run(conv_dense):
    _, mod, art = conv_dense
    lib = ctypes.CDLL(str(BUILD / "lib" / "libswitchyard_runtime.so"))

    class SyTensor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("ndim", ctypes.c_int),
                    ("shape", ctypes.POINTER(ctypes.c_int64))]

    lib.sy_last_error.restype = ctypes.c_char_p
    handle = ctypes.c_void_p()
    assert lib.sy_artifact_load(str(art).encode(), ctypes.byref(handle)) == 0, lib.sy_last_error()
    try:
        ndim, shape = ctypes.c_int(), ctypes.POINTER(ctypes.c_int64)()
        assert lib.sy_artifact_input_shape(handle, 0, ctypes.byref(ndim), ctypes.byref(shape)) == 0
        assert [shape[i] for i in range(ndim.value)] == [-1, 3, 8, 8]
        x = np.random.default_rng(5).standard_normal((2, 3, 8, 8)).astype(np.float32)
        x_shape = (ctypes.c_int64 * 4)(*x.shape)
        inputs = SyTensor(x.ctypes.data, 0, 4, x_shape)
        assert lib.sy_artifact_output_shape_for(handle, ctypes.byref(inputs), 1, 0, ctypes.byref(ndim),
                                                ctypes.byref(shape)) == 0, lib.sy_last_error()
        assert [shape[i] for i in range(ndim.value)] == [2, 4]
        y = np.zeros((2, 4), np.float32)
        y_shape = (ctypes.c_int64 * 2)(2, 4)
        outputs = SyTensor(y.ctypes.data, 0, 2, y_shape)
        assert lib.sy_artifact_run(handle, ctypes.byref(inputs), 1, ctypes.byref(outputs), 1) == 0, lib.sy_last_error()
        np.testing.assert_allclose(y, sy.evaluate(mod, x=x), rtol=1e-4, atol=1e-4)
        # Batch 5 runs as 4 + 1 (the output's shape says so), batch 0 as nothing.
        x = np.random.default_rng(6).standard_normal((5, 3, 8, 8)).astype(np.float32)
        inputs = SyTensor(x.ctypes.data, 0, 4, (ctypes.c_int64 * 4)(*x.shape))
        assert lib.sy_artifact_output_shape_for(handle, ctypes.byref(inputs), 1, 0, ctypes.byref(ndim),
                                                ctypes.byref(shape)) == 0, lib.sy_last_error()
        assert [shape[i] for i in range(ndim.value)] == [5, 4]
        y = np.zeros((5, 4), np.float32)
        outputs = SyTensor(y.ctypes.data, 0, 2, (ctypes.c_int64 * 2)(5, 4))
        assert lib.sy_artifact_run(handle, ctypes.byref(inputs), 1, ctypes.byref(outputs), 1) == 0, lib.sy_last_error()
        np.testing.assert_allclose(y, sy.evaluate(mod, x=x), rtol=1e-4, atol=1e-4)
        inputs.shape[0] = 0
        assert lib.sy_artifact_run(handle, ctypes.byref(inputs), 1, ctypes.byref(outputs), 1) != 0
        assert b"dimension 0 (n) is 0" in lib.sy_last_error()
    finally:
        lib.sy_artifact_free(handle)


class SmallNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
                                            torch.nn.MaxPool2d(2), torch.nn.AdaptiveAvgPool2d((2, 2)))
        self.head = torch.nn.Linear(32, 5)

    def forward(self, x):
        y = self.features(x)
        return self.head(y.view(y.size(0), -1))


def test_a_torch_export_with_dynamic_axes_matches_pytorch_at_each_batch(tmp_path):
    torch.manual_seed(0)
    net = SmallNet().eval()
    path = tmp_path / "small.onnx"
    torch.onnx.export(net, torch.randn(1, 3, 16, 16), str(path), input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}}, opset_version=13)
    art = tmp_path / "small.art"
    built = run_cli("compile", path, "--specialize", "batch=1,3,8", "-o", art)
    assert built.returncode == 0, built.stderr
    model = sy.runtime.load(art)
    for batch in (1, 3, 8):
        x = np.random.default_rng(batch).standard_normal((batch, 3, 16, 16)).astype(np.float32)
        np.testing.assert_allclose(model.run(input=x), net(torch.from_numpy(x)).detach().numpy(), rtol=1e-4,
                                   atol=1e-5)


def test_two_dimensions_compile_their_cross_product(tmp_path):
    source = tmp_path / "two.sy"
    source.write_text("def @main(%x: Tensor[(n, s), float32], %y: Tensor[(n, s), float32]) {\n"
                      "  nn.relu(multiply(%x, %y))\n}\n")
    art = tmp_path / "two.art"
    built = run_cli("compile", source, "--specialize", "n=1,2", "--specialize", "s=3,5", "-o", art)
    assert built.returncode == 0, built.stderr
    model = sy.runtime.load(art)
    assert model.specializations == ["n=1,s=3", "n=1,s=5", "n=2,s=3", "n=2,s=5"]
    for n, s in ((1, 3), (1, 5), (2, 3), (2, 5)):
        x, y = (np.random.default_rng(n * 10 + s + k).standard_normal((n, s)).astype(np.float32) for k in (0, 1))
        np.testing.assert_array_equal(model.run(x=x, y=y), np.maximum(x * y, 0))
    with pytest.raises(sy.RuntimeError, match=r"input 'x' dimension 1 \(s\) is 4, but this artifact was compiled "
                                              r"only for n=1,s=3; n=1,s=5; n=2,s=3; n=2,s=5"):
        model.run(x=np.zeros((2, 4), np.float32), y=np.zeros((2, 4), np.float32))
    # x and y share n and s: a run where they differ names the two inputs.
    with pytest.raises(sy.RuntimeError, match=r"input 'y' dimension 0 \(n\) is 1, but input 'x' dimension 0 \(n\) "
                                              r"is 2: the model needs them equal"):
        model.run(x=np.zeros((2, 3), np.float32), y=np.zeros((1, 5), np.float32))


def test_bad_specialisations_are_refused_by_name(tmp_path):
    source = tmp_path / "one.sy"
    source.write_text("def @main(%x: Tensor[(n<=4, 2), float32]) {\n  nn.relu(%x)\n}\n")
    cases = [(["--specialize", "m=1"], "--specialize m: @main's inputs have no dimension m (their symbolic "
                                       "dimensions: n)"),
             (["--specialize", "n=1,x"], "--specialize n=1,x: 'x' is not a non-negative integer"),
             (["--specialize", "n=2,2"], "--specialize n=2,2: 2 is given twice"),
             (["--specialize", "n=8"], "8"),
             ]
    for flags, message in cases:
        refused = run_cli("compile", source, *flags, "-o", tmp_path / "never")
        assert refused.returncode == 1, (flags, refused.stdout)
        assert message in refused.stderr, (flags, refused.stderr)
        assert not (tmp_path / "never").exists()


def test_requests_in_flight_each_run_the_program_of_their_batch(conv_dense):
    _, mod, art = conv_dense
    model = sy.runtime.load(art, max_in_flight=2)
    assert model.max_in_flight == 2
    batches = [4, 1, 2, 4, 1]
    inputs = [np.random.default_rng(10 + i).standard_normal((b, 3, 8, 8)).astype(np.float32)
              for i, b in enumerate(batches)]
    futures = [model.run_async(x=x) for x in inputs]
    for x, future in zip(inputs, futures):
        np.testing.assert_allclose(future.result(), sy.evaluate(mod, x=x), rtol=1e-4, atol=1e-4)
    # A batch of 3 runs in chunks (2 + 1) and is ready when run_async returns; 0 is refused.
    x = np.random.default_rng(9).standard_normal((3, 3, 8, 8)).astype(np.float32)
    np.testing.assert_allclose(model.run_async(x=x).result(), sy.evaluate(mod, x=x), rtol=1e-4, atol=1e-4)
    with pytest.raises(sy.RuntimeError, match=r"dimension 0 \(n\) is 0"):
        model.run_async(x=np.zeros((0, 3, 8, 8), np.float32)).result()
