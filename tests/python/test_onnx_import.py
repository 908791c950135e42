# The ONNX importer's contract: spans are the ONNX node names, initializers
# become constants, symbolic dimensions are fixed by shapes, external data
# is read from beside the model; and every bad input — not ONNX, truncated,
# an opset out of range, unsupported operators, external data outside the
# model's folder, a symbolic dimension left open, a shape for no input — is
# a clear error naming what is wrong, from Python and from the CLI (exit 1,
# nothing written).
import os
import pathlib
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import switchyard as sy
from switchyard import ir

REPO = pathlib.Path(__file__).resolve().parents[2]
SWITCHYARD = pathlib.Path(os.environ.get("SY_BUILD_DIR", REPO / "build")) / "bin" / "switchyard"


def dense_relu_model(opset=13, batch=2, nodes=None):
    """y = relu(x @ w + b) with w, b as initializers."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "b")
    nodes = nodes or [helper.make_node("MatMul", ["x", "w"], ["xw"], name="layer/matmul"),
                      helper.make_node("Add", ["xw", "b"], ["pre"], name="layer/add"),
                      helper.make_node("Relu", ["pre"], ["y"], name="layer/relu")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 3])], [w, b])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def save(model, path):
    onnx.save(model, str(path))
    return path


def weights_of(model):
    return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


def reference(model, x):
    w = weights_of(model)
    return np.maximum(x @ w["w"] + w["b"], 0)


class Spans(ir.ExprVisitor):
    def __init__(self):
        super().__init__()
        self.calls, self.constants = {}, 0

    def visit_call(self, node):
        self.calls[node.op.name] = str(node.span)
        super().visit_call(node)

    def visit_constant(self, node):
        self.constants += 1


def test_spans_are_node_names_and_initializers_are_constants(tmp_path):
    model = dense_relu_model()
    mod = sy.frontend.from_onnx(save(model, tmp_path / "m.onnx"))
    main = mod["main"]
    assert [p.name_hint for p in main.params] == ["x"]
    spans = Spans()
    spans.visit(main.body)
    assert spans.calls == {"matmul": "layer/matmul", "add": "layer/add", "nn.relu": "layer/relu"}
    assert spans.constants == 2
    x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
    np.testing.assert_allclose(sy.evaluate(mod, x=x), reference(model, x), rtol=1e-5, atol=1e-6)


def test_shape_subgraphs_fold_to_static_shapes(tmp_path):
    # Flatten written as PyTorch exports it: Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
    nodes = [helper.make_node("Shape", ["x"], ["s"], name="shape"),
             helper.make_node("Constant", [], ["zero"], name="zero", value=numpy_helper.from_array(np.array(0, np.int64))),
             helper.make_node("Gather", ["s", "zero"], ["n"], name="gather", axis=0),
             helper.make_node("Unsqueeze", ["n", "axes"], ["n1"], name="unsqueeze"),
             helper.make_node("Concat", ["n1", "minus_one"], ["target"], name="concat", axis=0),
             helper.make_node("Reshape", ["x", "target"], ["y"], name="reshape")]
    inits = [numpy_helper.from_array(np.array([0], np.int64), "axes"),
             numpy_helper.from_array(np.array([-1], np.int64), "minus_one")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 12])], inits)
    mod = sy.frontend.from_onnx(save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
                                     tmp_path / "flatten.onnx"))
    spans = Spans()
    spans.visit(mod["main"].body)
    assert spans.calls == {"reshape": "reshape"}, "the shape computation folds away"
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(sy.evaluate(mod, x=x), x.reshape(2, 12))


def test_symbolic_dimension_stays_symbolic_unless_a_shape_fixes_it(tmp_path):
    model = dense_relu_model(batch="batch")
    path = save(model, tmp_path / "sym.onnx")
    symbolic = sy.frontend.from_onnx(path)
    assert str(symbolic["main"].params[0].checked_type) == "Tensor[(batch, 4), float32]"
    mod = sy.frontend.from_onnx(path, shapes={"x": (5, 4)})
    x = np.ones((5, 4), np.float32)
    np.testing.assert_allclose(sy.evaluate(mod, x=x), reference(model, x), rtol=1e-5)
    with pytest.raises(sy.UsageError, match=r"--input-shape names 'z', which is not an input .*\(its inputs: x\)"):
        sy.frontend.from_onnx(path, shapes={"z": (1,)})
    with pytest.raises(sy.UsageError, match="dimension 1 is 4 in the model, not 7"):
        sy.frontend.from_onnx(path, shapes={"x": (5, 7)})


def test_external_data_is_read_from_beside_the_model(tmp_path):
    x = np.ones((2, 4), np.float32)
    expected = reference(dense_relu_model(), x)
    onnx.save(dense_relu_model(), str(tmp_path / "ext.onnx"), save_as_external_data=True,
              all_tensors_to_one_file=True, location="ext.weights", size_threshold=0)
    mod = sy.frontend.from_onnx(tmp_path / "ext.onnx")
    np.testing.assert_allclose(sy.evaluate(mod, x=x), expected, rtol=1e-5)


@pytest.mark.parametrize("location, message", [
    ("../outside.bin", "leaves the model's directory"),
    ("/etc/passwd", "is an absolute path"),
    ("missing.bin", "not found"),
])
def test_external_data_outside_or_missing_is_refused(tmp_path, location, message):
    model = dense_relu_model()
    onnx.save(model, str(tmp_path / "ext.onnx"), save_as_external_data=True, location="ext.weights",
              size_threshold=0)
    tampered = onnx.load(str(tmp_path / "ext.onnx"), load_external_data=False)
    for t in tampered.graph.initializer:
        for entry in t.external_data:
            if entry.key == "location":
                entry.value = location
    (tmp_path / "outside.bin").write_bytes(b"\0" * 64)
    sub = tmp_path / "sub"
    sub.mkdir()
    path = sub / "tampered.onnx"
    onnx.save(tampered, str(path))
    with pytest.raises(sy.ParseError, match=message):
        sy.frontend.from_onnx(path)


def test_external_data_too_short_is_refused(tmp_path):
    model = dense_relu_model()
    onnx.save(model, str(tmp_path / "ext.onnx"), save_as_external_data=True, location="ext.weights",
              size_threshold=0)
    data = tmp_path / "ext.weights"
    data.write_bytes(data.read_bytes()[:10])
    with pytest.raises(sy.ParseError, match="too short"):
        sy.frontend.from_onnx(tmp_path / "ext.onnx")


def test_every_unsupported_operator_is_listed_with_its_node(tmp_path):
    nodes = [helper.make_node("Unique", ["x"], ["a"], name="odd/unique"),
             helper.make_node("Relu", ["a"], ["b"], name="ok/relu"),
             helper.make_node("NonZero", ["b"], ["y"], name="odd/nonzero")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    path = save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), tmp_path / "u.onnx")
    with pytest.raises(sy.ParseError) as caught:
        sy.frontend.from_onnx(path)
    message = caught.value.message
    assert "2 nodes with unsupported operators" in message
    assert "'odd/unique' (Unique)" in message and "'odd/nonzero' (NonZero)" in message and "Relu" not in message


@pytest.mark.parametrize("opset", [0, 22, 100])
def test_opset_outside_1_to_21_is_refused(tmp_path, opset):
    path = save(dense_relu_model(opset=opset), tmp_path / "o.onnx")
    with pytest.raises(sy.ParseError, match=f"opset {opset} is not supported .*opsets 1 to 21"):
        sy.frontend.from_onnx(path)


def test_an_old_version_below_opset_7_is_refused_naming_node_and_opset(tmp_path):
    """Relu-1 (with consumed_inputs, opsets 1 to 5) is not converted: the
    node is refused (not imported with opset 7's meaning), naming the opset."""
    path = save(dense_relu_model(opset=1), tmp_path / "o.onnx")
    with pytest.raises(sy.ParseError) as caught:
        sy.frontend.from_onnx(path)
    assert ("node 'layer/relu' (Relu): Relu-1 (opset 1) is not supported (Switchyard converts Relu from "
            "version 6; convert the model to opset 7 or newer with onnx.version_converter)") in caught.value.message


def test_add_6_without_the_broadcast_attribute_does_not_broadcast(tmp_path):
    """Add-6 broadcasts only with broadcast=1: opset 7's meaning would add
    b to each row, version 6's refuses the shapes, naming the node."""
    path = save(dense_relu_model(opset=6), tmp_path / "o.onnx")
    with pytest.raises(sy.ParseError, match=r"node 'layer/add' \(Add\): the inputs' shapes \(2, 3\) and \(3\) "
                                            r"differ, and Add-6 broadcasts only with broadcast=1"):
        sy.frontend.from_onnx(path)


@pytest.mark.parametrize("opset", [7, 9, 11, 12, 13, 17, 18, 21])
def test_every_opset_from_7_to_21_imports(tmp_path, opset):
    model = dense_relu_model(opset=opset)
    mod = sy.frontend.from_onnx(save(model, tmp_path / "m.onnx"))
    x = np.random.default_rng(opset).standard_normal((2, 4)).astype(np.float32)
    np.testing.assert_allclose(sy.evaluate(mod, x=x), reference(model, x), rtol=1e-5, atol=1e-6)


def test_unknown_attribute_is_refused(tmp_path):
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="odd", flavour=3)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    path = save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), tmp_path / "a.onnx")
    with pytest.raises(sy.ParseError, match=r"node 'odd' \(Relu\): attribute 'flavour' is not supported"):
        sy.frontend.from_onnx(path)


def test_not_onnx_and_truncated_files_are_refused(tmp_path):
    (tmp_path / "text.onnx").write_text("def @main() { 0f }\n")
    with pytest.raises(sy.ParseError, match="not an ONNX model"):
        sy.frontend.from_onnx(tmp_path / "text.onnx")
    whole = dense_relu_model().SerializeToString()
    for cut in (len(whole) // 3, len(whole) - 7):
        (tmp_path / "cut.onnx").write_bytes(whole[:cut])
        with pytest.raises(sy.ParseError):
            sy.frontend.from_onnx(tmp_path / "cut.onnx")
    with pytest.raises(sy.UsageError, match="no such file"):
        sy.frontend.from_onnx(tmp_path / "absent.onnx")


def run_cli(*args):
    return subprocess.run([str(SWITCHYARD), *map(str, args)], capture_output=True, text=True)


def test_cli_compiles_runs_and_refuses(tmp_path):
    model = dense_relu_model()
    path = save(model, tmp_path / "m.onnx")
    x = np.random.default_rng(2).standard_normal((2, 4)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    assert run_cli("compile", path, "-o", tmp_path / "art").returncode == 0
    ran = run_cli("run", tmp_path / "art", "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", tmp_path / "out",
                  "--repeat", "3")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip().splitlines()[-1].startswith("latency_ms median=")
    np.testing.assert_allclose(np.load(tmp_path / "out" / "y.npy"), reference(model, x), rtol=1e-5, atol=1e-6)
    text = run_cli("import", path)
    assert text.returncode == 0 and "nn.relu" in text.stdout and "def @main" in text.stdout
    assert run_cli("check", path).stdout.strip() == "ok"

    bad = save(dense_relu_model(opset=6), tmp_path / "old.onnx")
    result = run_cli("compile", bad, "-o", tmp_path / "never")
    assert result.returncode == 1 and "Add-6 broadcasts only with broadcast=1" in result.stderr
    assert not (tmp_path / "never").exists()
    result = run_cli("compile", path, "-o", tmp_path / "never", "--input-shape", "nope=1x4")
    assert result.returncode == 1 and "--input-shape names 'nope'" in result.stderr
    assert not (tmp_path / "never").exists()
    result = run_cli("check", path, "--input-shape", "x=2x4four")
    assert result.returncode == 1 and "malformed shape '2x4four'" in result.stderr


@pytest.mark.parametrize("op,x_shape,w_shape,message", [
    ("Conv", [1, 2, 5, 5], [3], r"node 'bad' \(Conv\): the weight's rank 1 is not the input's 4"),
    ("Conv", [1, 2, 5], [3, 2, 3, 3], r"node 'bad' \(Conv\): the weight's rank 4 is not the input's 3"),
    ("MaxPool", [4], None, r"node 'bad' \(MaxPool\): the input has shape \(4\), not \(N, C, spatial...\)"),
])
def test_windows_of_the_wrong_rank_are_refused(tmp_path, op, x_shape, w_shape, message):
    # A rank-1 Conv weight read past the end of its shape (found by the
    # onnx_import fuzz target).
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)]
    names = ["x"]
    if w_shape:
        inputs.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, w_shape))
        names.append("w")
    attrs = {"kernel_shape": [2, 2]} if op == "MaxPool" else {}
    node = helper.make_node(op, names, ["y"], name="bad", **attrs)
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), tmp_path / "w.onnx")
    with pytest.raises(sy.ParseError, match=message):
        sy.frontend.from_onnx(path)


@pytest.mark.parametrize("node,opset,message", [
    # The wrong kind, the wrong length, an axis out of range, an axis twice.
    (helper.make_node("Softmax", ["x"], ["y"], name="bad", axis=1.5), 13,
     r"node 'bad' \(Softmax\): attribute 'axis' must be of type int, got float"),
    (helper.make_node("MaxPool", ["x"], ["y"], name="bad", kernel_shape=[2, 2], strides=[1, 1, 1]), 13,
     r"node 'bad' \(MaxPool\): strides, dilations and pads must have one entry \(pads two\) per spatial axis"),
    (helper.make_node("Softmax", ["x"], ["y"], name="bad", axis=5), 13,
     r"node 'bad' \(Softmax\): axis 5 is out of range for rank 4"),
    (helper.make_node("ReduceSum", ["x"], ["y"], name="bad", axes=[1, 1]), 11,
     r"node 'bad' \(ReduceSum\): 'sum': axis \[1, 1\] names 1 twice"),
    (helper.make_node("Transpose", ["x"], ["y"], name="bad", perm=[0, 0, 1, 2]), 13,
     r"node 'bad' \(Transpose\): 'transpose': axes \[0, 0, 1, 2\] is not a permutation of 0..3"),
])
def test_a_bad_attribute_is_refused_naming_the_node(tmp_path, node, opset, message):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])
    graph = helper.make_graph([node], "g", [x], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), tmp_path / "bad.onnx")
    with pytest.raises(sy.ParseError, match=message):
        sy.frontend.from_onnx(path)
