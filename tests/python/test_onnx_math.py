# ONNX's element-wise math converters that map onto one IR operator each
# (Sin ... Atanh), on one-node models built with onnx.helper: through the
# reference interpreter and through a compiled artifact, against NumPy on
# inputs across each function's domain; and the refusal of an input type
# ONNX does not define them for, naming the node.
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import switchyard as sy

RNG = np.random.default_rng(41)


def one_node_model(path, op, opset, x, **attrs):
    node = helper.make_node(op, ["x"], ["y"], name="node", **attrs)
    element = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[x.dtype]
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", element, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), str(path))
    return path


def interpreted_and_compiled(tmp_path, path, **feeds):
    mod = sy.frontend.from_onnx(path)
    interpreted = np.asarray(sy.evaluate(mod, **feeds))
    sy.build(mod, ["cpu:0"], tmp_path / "artifact")
    compiled = sy.runtime.load(tmp_path / "artifact").run(**feeds)
    compiled = np.asarray(compiled[0] if isinstance(compiled, (list, tuple)) else compiled)
    return interpreted, compiled


# ONNX op, the opset it came in, NumPy's function, the interval sampled.
TRIGONOMETRIC = [
    ("Sin", 7, np.sin, (-10, 10)),
    ("Cos", 7, np.cos, (-10, 10)),
    ("Tan", 7, np.tan, (-1.5, 1.5)),
    ("Asin", 7, np.arcsin, (-1, 1)),
    ("Acos", 7, np.arccos, (-1, 1)),
    ("Atan", 7, np.arctan, (-50, 50)),
    ("Sinh", 9, np.sinh, (-8, 8)),
    ("Cosh", 9, np.cosh, (-8, 8)),
    ("Asinh", 9, np.arcsinh, (-50, 50)),
    ("Acosh", 9, np.arccosh, (1, 50)),
    ("Atanh", 9, np.arctanh, (-0.999, 0.999)),
]


@pytest.mark.parametrize("op, since, reference, interval", TRIGONOMETRIC, ids=[t[0] for t in TRIGONOMETRIC])
def test_trigonometric_and_hyperbolic_match_numpy(tmp_path, op, since, reference, interval):
    x = RNG.uniform(*interval, size=(3, 4, 5)).astype(np.float32)
    want = reference(x.astype(np.float64))
    for opset in (since, 21):
        interpreted, compiled = interpreted_and_compiled(tmp_path / str(opset),
                                                         one_node_model(tmp_path / f"{op}_{opset}.onnx", op, opset, x),
                                                         x=x)
        for got in (interpreted, compiled):
            assert got.dtype == np.float32 and got.shape == x.shape
            np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6 * float(np.abs(want).max()))


def test_trigonometric_outside_the_domain_is_nan_and_float16_rounds(tmp_path):
    x = np.array([-2, -1, 0.5, 1, 2], np.float32)
    with np.errstate(invalid="ignore", divide="ignore"):
        for op, reference in (("Asin", np.arcsin), ("Acosh", np.arccosh), ("Atanh", np.arctanh)):
            path = one_node_model(tmp_path / f"{op}.onnx", op, 13, x)
            for got in interpreted_and_compiled(tmp_path / op, path, x=x):
                np.testing.assert_array_equal(np.isnan(got), np.isnan(reference(x)), err_msg=op)
                np.testing.assert_allclose(got[~np.isnan(got)], reference(x)[~np.isnan(got)], rtol=1e-6)
    half = RNG.uniform(-3, 3, size=(16,)).astype(np.float16)
    for got in interpreted_and_compiled(tmp_path / "half", one_node_model(tmp_path / "sin16.onnx", "Sin", 13, half),
                                        x=half):
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got, np.sin(half.astype(np.float32)).astype(np.float16))


def test_an_integer_input_is_refused_naming_the_node(tmp_path):
    path = one_node_model(tmp_path / "cos.onnx", "Cos", 13, np.arange(4, dtype=np.int32))
    with pytest.raises(sy.ParseError) as caught:
        sy.frontend.from_onnx(path)
    assert "node 'node' (Cos): needs a floating-point input, got int32" in str(caught.value)


def test_sinh_before_opset_9_is_refused_naming_the_opset(tmp_path):
    path = one_node_model(tmp_path / "sinh.onnx", "Sinh", 8, np.zeros(3, np.float32))
    with pytest.raises(sy.ParseError) as caught:
        sy.frontend.from_onnx(path)
    assert "Sinh is not in opset 8" in str(caught.value)
