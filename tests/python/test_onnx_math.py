# ONNX's math converters that map onto one IR operator each (Sin ...
# Atanh, ReduceProd, BitShift), on one-node models built with onnx.helper: through the
# reference interpreter and through a compiled artifact, against NumPy on
# inputs across each function's domain; and the refusal of an input type
# ONNX does not define them for, naming the node.
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import switchyard as sy

RNG = np.random.default_rng(41)


def one_node_model(path, op, opset, x, inits=(), **attrs):
    """A node reading the graph input x, then the initializers `inits` (name, array)."""
    node = helper.make_node(op, ["x"] + [name for name, _ in inits], ["y"], name="node", **attrs)
    element = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[x.dtype]
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", element, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)],
                              [numpy_helper.from_array(v, name) for name, v in inits])
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


# ---- ReduceProd: axes an attribute before 18, an input from 18 ------------------

def test_reduce_prod_by_version(tmp_path):
    x = RNG.uniform(0.5, 1.5, size=(2, 3, 4)).astype(np.float32) * RNG.choice([-1, 1], size=(2, 3, 4))
    x = x.astype(np.float32)
    axes = ("axes", np.array([1], np.int64))
    cases = [  # opset, initializers, attributes, expected
        (1, (), {"axes": [1]}, np.prod(x, axis=1, keepdims=True)),
        (11, (), {"axes": [-1, 0], "keepdims": 0}, np.prod(x, axis=(0, 2))),
        (13, (), {}, np.prod(x, keepdims=True)),
        (18, (axes,), {"keepdims": 0}, np.prod(x, axis=1)),
        (18, (), {}, np.prod(x, keepdims=True)),
        (18, (), {"noop_with_empty_axes": 1}, x),
    ]
    for k, (opset, inits, attrs, want) in enumerate(cases):
        path = one_node_model(tmp_path / f"prod{k}.onnx", "ReduceProd", opset, x, inits, **attrs)
        for got in interpreted_and_compiled(tmp_path / str(k), path, x=x):
            assert got.shape == want.shape, (opset, attrs)
            np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=f"opset {opset} {attrs}")


def test_reduce_prod_of_integers_wraps_as_numpy(tmp_path):
    x = RNG.integers(-9, 10, size=(3, 40)).astype(np.int32)
    path = one_node_model(tmp_path / "prod.onnx", "ReduceProd", 13, x, axes=[1], keepdims=0)
    for got in interpreted_and_compiled(tmp_path, path, x=x):
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, np.prod(x, axis=1, dtype=np.int32))


def test_reduce_prod_axes_computed_at_run_time_are_refused(tmp_path):
    x = np.ones((2, 3), np.float32)
    node = helper.make_node("ReduceProd", ["x", "axes"], ["y"], name="node")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
                                            helper.make_tensor_value_info("axes", TensorProto.INT64, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), str(tmp_path / "m.onnx"))
    with pytest.raises(sy.ParseError) as caught:
        sy.frontend.from_onnx(tmp_path / "m.onnx")
    assert "node 'node' (ReduceProd): input 1 ('axes'" in str(caught.value)


@pytest.mark.parametrize("direction, reference", [("LEFT", np.left_shift), ("RIGHT", np.right_shift)])
def test_bit_shift_of_uint8_matches_numpy_including_shifts_of_8_or_more(tmp_path, direction, reference):
    x = RNG.integers(0, 256, size=(3, 4, 5), dtype=np.uint8)
    amount = np.array([0, 1, 3, 7, 9], np.uint8)  # along the last axis; by 8 and up every bit is shifted out
    path = one_node_model(tmp_path / "shift.onnx", "BitShift", 11, x, [("by", amount)], direction=direction)
    want = np.where(amount >= 8, np.uint8(0), reference(x, amount)).astype(np.uint8)
    for got in interpreted_and_compiled(tmp_path, path, x=x):
        assert got.dtype == np.uint8
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.uint16, np.uint32, np.uint64])
@pytest.mark.parametrize("direction, reference", [("LEFT", np.left_shift), ("RIGHT", np.right_shift)])
def test_bit_shift_of_wider_unsigned_types_uses_their_width(tmp_path, dtype, direction, reference):
    bits = np.iinfo(dtype).bits
    x = RNG.integers(0, np.iinfo(dtype).max, size=(3, 6), dtype=dtype, endpoint=True)
    x[0, :] = np.iinfo(dtype).max  # the top bit set: a right shift must be logical
    amount = np.array([0, 1, 7, bits - 1, bits, bits + 5], dtype)
    path = one_node_model(tmp_path / "shift.onnx", "BitShift", 11, x, [("by", amount)], direction=direction)
    want = np.where(amount >= bits, dtype(0), reference(x, np.minimum(amount, bits - 1))).astype(dtype)
    for got in interpreted_and_compiled(tmp_path, path, x=x):
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want)


def test_bit_shift_refusals_name_the_node(tmp_path):
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    path = one_node_model(tmp_path / "signed.onnx", "BitShift", 11, x, [("by", np.ones(3, np.int32))], direction="LEFT")
    with pytest.raises(sy.ParseError,
                       match=r"node 'node' \(BitShift\): BitShift of int32 is not supported \(unsigned integers only\)"):
        sy.frontend.from_onnx(path)
    x = np.arange(6, dtype=np.uint8)
    path = one_node_model(tmp_path / "up.onnx", "BitShift", 11, x, [("by", np.ones(6, np.uint8))], direction="UP")
    with pytest.raises(sy.ParseError, match=r"node 'node' \(BitShift\): direction='UP' is not one of 'LEFT', 'RIGHT'"):
        sy.frontend.from_onnx(path)
    path = one_node_model(tmp_path / "old.onnx", "BitShift", 10, x, [("by", np.ones(6, np.uint8))], direction="LEFT")
    with pytest.raises(sy.ParseError, match=r"node 'node' \(BitShift\): BitShift is not in opset 10"):
        sy.frontend.from_onnx(path)


@pytest.mark.parametrize("base_dtype", [np.int32, np.int64, np.uint8])
@pytest.mark.parametrize("exponent_dtype", [np.float32, np.float64, np.int64, np.int32])
def test_pow_of_an_integer_base_with_an_exponent_of_another_type_matches_numpy(tmp_path, base_dtype, exponent_dtype):
    # Pow-12 lets the exponent's type differ: NumPy raises in the wider type
    # and the result keeps the base's, truncated (2 ** 0.5 is 1).
    x = np.array([[1, 2, 3, 7], [0, 5, 2, 9]], base_dtype)
    e = np.array([4, 0.5, 2.5, 3], exponent_dtype) if np.dtype(exponent_dtype).kind == "f" else \
        np.array([4, 0, 2, 3], exponent_dtype)
    want = np.power(x, e).astype(base_dtype)
    path = one_node_model(tmp_path / "pow.onnx", "Pow", 15, x, [("e", e)])
    interpreted, compiled = interpreted_and_compiled(tmp_path, path, x=x)
    for got in (interpreted, compiled):
        assert got.dtype == base_dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("fmod, reference", [(1, np.fmod), (0, np.mod)])
def test_mod_of_floats_is_c_fmod_or_python_mod(tmp_path, dtype, fmod, reference):
    # Both signs of each operand, remainders of zero, and a quotient too
    # large for a - trunc(a / b) * b to be exact (fmod is).
    x = np.array([[-4.3, 7.2, 5.0, 4.3, -7.2, 8.0], [6.0, -6.0, 3e4 + 0.5, -3.5, 0.25, 9.75]], dtype)
    divisor = np.array([2.1, -3.4, 8.0, -2.1, 3.4, 0.3], dtype)
    path = one_node_model(tmp_path / "mod.onnx", "Mod", 13, x, [("b", divisor)], fmod=fmod)
    want = reference(x, divisor)
    for got in interpreted_and_compiled(tmp_path, path, x=x):
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=1e-3 if dtype == np.float16 else 1e-6, atol=1e-6)
