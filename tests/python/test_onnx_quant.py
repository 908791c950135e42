# The ONNX converters of the quantization operators (QuantizeLinear,
# DequantizeLinear, DynamicQuantizeLinear, MatMulInteger, ConvInteger,
# QLinearMatMul, QLinearConv): models written with onnx.helper against NumPy
# references written from ONNX's formulas (Debian's onnx 1.12 has no
# onnx.reference), through the interpreter and a compiled artifact (one
# device, and split across cpu:0 and cpu:1), and each refusal of bad input
# with its message (the CLI exits 1 and writes nothing).
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
SWITCHYARD = pathlib.Path(os.environ.get("SY_BUILD_DIR", REPO / "build")) / "bin" / "switchyard"
RNG = np.random.default_rng(36)
RANGES = {np.int8: (-128, 127), np.uint8: (0, 255)}


def element_type(dtype):
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]


def save(tmp_path, op, inputs, inits, opset, outputs=("y",), **attrs):
    """A one-node model: graph inputs `inputs` and initializers `inits` (both
    name -> array, in the node's input order; None for an absent input)."""
    order = list(inputs) + list(inits)
    names = [name if (inputs | inits)[name] is not None else "" for name in order]
    while names and names[-1] == "":
        names.pop()
    node = helper.make_node(op, names, list(outputs), name="node", **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(n, element_type(v.dtype), v.shape) for n, v in inputs.items()],
        [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outputs],
        [numpy_helper.from_array(v, n) for n, v in inits.items() if v is not None])
    path = tmp_path / f"{op}_{opset}_{len(list(tmp_path.glob('*.onnx')))}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), str(path))
    return path


def both_ways(tmp_path, path, devices=("cpu:0",), place=(), **inputs):
    """The interpreter's outputs (a list), checked equal to the compiled artifact's."""
    mod = sy.frontend.from_onnx(path)
    expected = sy.evaluate(mod, **inputs)
    expected = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    out = tmp_path / f"artifact_{len(list(tmp_path.glob('artifact_*')))}"
    report = sy.build(mod, list(devices), out, place=list(place))
    assert len(devices) == 1 or " 0 copies" not in str(report)  # a split build crosses devices
    got = sy.runtime.load(out).run(**inputs)
    got = list(got) if isinstance(got, (list, tuple)) else [got]
    for g, e in zip(got, expected, strict=True):
        assert g.dtype == e.dtype
        np.testing.assert_array_equal(g, e)
    return expected


def along(v, axis, rank):
    """A per-axis vector shaped to broadcast along `axis` of a rank-`rank` tensor."""
    v = np.asarray(v)
    return v if v.ndim == 0 else v.reshape((-1,) + (1,) * (rank - 1 - axis % rank))


def quantize_reference(x, scale, zero_point, dtype, axis=1):
    # ONNX: saturate(round_half_to_even(x / scale) + zero_point), x / scale in float32.
    scaled = np.rint(x.astype(np.float32) / along(scale, axis, x.ndim).astype(np.float32))
    low, high = RANGES[dtype]
    return np.clip(scaled + along(zero_point, axis, x.ndim).astype(np.float32), low, high).astype(dtype)


# ---- QuantizeLinear, DequantizeLinear ---------------------------------------

@pytest.mark.parametrize("opset", [10, 13, 19, 21])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_quantize_per_tensor_saturates_at_both_ends(tmp_path, opset, dtype):
    x = (RNG.standard_normal((2, 3, 8)) * 40).astype(np.float32)
    x[0, 0, :4] = [1e6, -1e6, 300, -300]
    scale, zero_point = np.float32(0.37), np.array(3 if dtype == np.int8 else 128, dtype)
    path = save(tmp_path, "QuantizeLinear", {"x": x}, {"s": scale, "z": zero_point}, opset)
    (y,) = both_ways(tmp_path, path, x=x)
    np.testing.assert_array_equal(y, quantize_reference(x, scale, zero_point, dtype))
    low, high = RANGES[dtype]
    assert y[0, 0, 0] == high and y[0, 0, 1] == low


def test_quantize_rounds_halves_to_even(tmp_path):
    x = np.array([2.5, 3.5, -2.5, -3.5, 0.5, -0.5, 1.5, 126.5, -127.5], np.float32)
    path = save(tmp_path, "QuantizeLinear", {"x": x}, {"s": np.float32(1), "z": np.int8(0)}, 13)
    (y,) = both_ways(tmp_path, path, x=x)
    np.testing.assert_array_equal(y, np.array([2, 4, -2, -4, 0, 0, 2, 126, -128], np.int8))
    # The halves come from x / scale too: 5 / 2 = 2.5 -> 2, 7 / 2 -> 4, then the zero point.
    x = np.array([5, 7, -5, -7], np.float32)
    path = save(tmp_path, "QuantizeLinear", {"x": x}, {"s": np.float32(2), "z": np.uint8(10)}, 13)
    (y,) = both_ways(tmp_path, path, x=x)
    np.testing.assert_array_equal(y, np.array([12, 14, 8, 6], np.uint8))


def test_quantize_without_zero_point_is_uint8(tmp_path):
    x = np.array([-3.0, 0.4, 0.6, 254.5, 300], np.float32)
    path = save(tmp_path, "QuantizeLinear", {"x": x}, {"s": np.float32(1)}, 13)
    (y,) = both_ways(tmp_path, path, x=x)
    np.testing.assert_array_equal(y, np.array([0, 0, 1, 254, 255], np.uint8))


def test_quantize_output_dtype_of_version_21(tmp_path):
    x = np.array([-300, -1.5, 2.5, 300], np.float32)
    path = save(tmp_path, "QuantizeLinear", {"x": x}, {"s": np.float32(1)}, 21, output_dtype=TensorProto.INT8)
    (y,) = both_ways(tmp_path, path, x=x)
    np.testing.assert_array_equal(y, np.array([-128, -2, 2, 127], np.int8))


def test_quantize_int32_input(tmp_path):
    x = np.array([[-7, 0, 5, 1000]], np.int32)
    path = save(tmp_path, "QuantizeLinear", {"x": x}, {"s": np.float32(2), "z": np.int8(-1)}, 13)
    (y,) = both_ways(tmp_path, path, x=x)
    np.testing.assert_array_equal(y, np.array([[-5, -1, 1, 127]], np.int8))


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_quantize_and_dequantize_per_axis(tmp_path, axis, dtype):
    x = (RNG.standard_normal((3, 4, 5)) * 30).astype(np.float32)
    n = x.shape[axis]
    scale = RNG.uniform(0.05, 0.5, n).astype(np.float32)
    low, high = RANGES[dtype]
    zero_point = RNG.integers(low + 20, high - 20, n).astype(dtype)
    path = save(tmp_path, "QuantizeLinear", {"x": x}, {"s": scale, "z": zero_point}, 13, axis=axis)
    (q,) = both_ways(tmp_path, path, x=x)
    np.testing.assert_array_equal(q, quantize_reference(x, scale, zero_point, dtype, axis))
    assert (q == low).any() and (q == high).any()  # saturated somewhere, per channel
    path = save(tmp_path, "DequantizeLinear", {"q": q}, {"s": scale, "z": zero_point}, 13, axis=axis)
    (y,) = both_ways(tmp_path, path, q=q)
    want = (q.astype(np.float32) - along(zero_point, axis, 3).astype(np.float32)) * along(scale, axis, 3)
    np.testing.assert_array_equal(y, want)


def test_dequantize_float16_scale_of_version_19(tmp_path):
    q = np.array([0, 10, 200, 255], np.uint8)
    scale = np.float16(0.5)
    path = save(tmp_path, "DequantizeLinear", {"q": q}, {"s": scale, "z": np.uint8(10)}, 19)
    (y,) = both_ways(tmp_path, path, q=q)
    assert y.dtype == np.float16
    np.testing.assert_array_equal(y, np.array([-5, 0, 95, 122.5], np.float16))


# ---- DynamicQuantizeLinear --------------------------------------------------

def dynamic_quantize_reference(x):
    # ONNX's function body, step by step in float32.
    zero, q_max = np.float32(0), np.float32(255)
    low, high = np.minimum(x.min(), zero), np.maximum(x.max(), zero)
    scale = np.float32((high - low) / q_max)
    zero_point = np.rint(np.clip(zero - np.float32(low / scale), 0, 255))
    y = np.clip(np.rint(x / scale) + zero_point, 0, 255).astype(np.uint8)
    return y, scale, zero_point.astype(np.uint8)


@pytest.mark.parametrize("shift", [0.0, 5.0, -5.0])  # mixed signs, all positive, all negative
def test_dynamic_quantize_matches_onnx_formula(tmp_path, shift):
    x = (RNG.standard_normal((4, 7)) * 3 + shift).astype(np.float32)
    path = save(tmp_path, "DynamicQuantizeLinear", {"x": x}, {}, 11, outputs=("y", "scale", "zero_point"))
    y, scale, zero_point = both_ways(tmp_path, path, x=x)
    want_y, want_scale, want_zero_point = dynamic_quantize_reference(x)
    assert scale.shape == () and zero_point.shape == () and zero_point.dtype == np.uint8
    np.testing.assert_array_equal(scale, want_scale)
    np.testing.assert_array_equal(zero_point, want_zero_point)
    np.testing.assert_array_equal(y, want_y)


def test_dynamic_quantize_of_zeros(tmp_path):
    # The range is empty: the scale is 0 and 0 / 0 is NaN, which the casts send to 0.
    x = np.zeros((2, 3), np.float32)
    path = save(tmp_path, "DynamicQuantizeLinear", {"x": x}, {}, 11, outputs=("y", "scale", "zero_point"))
    y, scale, zero_point = both_ways(tmp_path, path, x=x)
    np.testing.assert_array_equal(y, np.zeros((2, 3), np.uint8))
    assert scale == 0 and zero_point == 0


# ---- MatMulInteger, ConvInteger ---------------------------------------------

def integers(dtype, shape):
    low, high = RANGES[dtype]
    return RNG.integers(low, high + 1, shape).astype(dtype)


def conv_reference(x, w, pads=(0, 0, 0, 0), strides=(1, 1), group=1):
    """An exact integer convolution (float64 is exact at these magnitudes), NCHW."""
    top, left, bottom, right = pads
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (top, bottom), (left, right)))
    y = torch.nn.functional.conv2d(torch.from_numpy(xp), torch.from_numpy(w.astype(np.float64)), stride=strides,
                                   groups=group)
    return y.numpy().astype(np.int64)


@pytest.mark.parametrize("a_dtype,b_dtype", [(np.uint8, np.int8), (np.int8, np.uint8), (np.uint8, np.uint8)])
def test_matmul_integer_with_zero_points(tmp_path, a_dtype, b_dtype):
    a, b = integers(a_dtype, (2, 5, 9)), integers(b_dtype, (9, 6))
    a_zero_point = integers(a_dtype, (5,))  # one per row of A
    b_zero_point = integers(b_dtype, (6,))  # one per column of B
    path = save(tmp_path, "MatMulInteger", {"a": a, "b": b}, {"az": a_zero_point, "bz": b_zero_point}, 10)
    (y,) = both_ways(tmp_path, path, a=a, b=b)
    want = (a.astype(np.int64) - a_zero_point.reshape(5, 1)) @ (b.astype(np.int64) - b_zero_point)
    assert y.dtype == np.int32
    np.testing.assert_array_equal(y, want)
    path = save(tmp_path, "MatMulInteger", {"a": a, "b": b}, {"az": np.array(a_zero_point[0])}, 10)
    (y,) = both_ways(tmp_path, path, a=a, b=b)
    np.testing.assert_array_equal(y, (a.astype(np.int64) - a_zero_point[0]) @ b.astype(np.int64))


def test_conv_integer_pads_with_the_zero_point(tmp_path):
    x, w = integers(np.uint8, (1, 4, 7, 6)), integers(np.int8, (6, 2, 3, 3))
    x_zero_point, w_zero_point = np.uint8(200), integers(np.int8, (6,))  # w per output channel
    path = save(tmp_path, "ConvInteger", {"x": x}, {"w": w, "xz": x_zero_point, "wz": w_zero_point}, 10,
                pads=[1, 0, 2, 1], strides=[2, 1], group=2)
    (y,) = both_ways(tmp_path, path, x=x)
    want = conv_reference(x.astype(np.int64) - 200, w.astype(np.int64) - w_zero_point.reshape(6, 1, 1, 1),
                          (1, 0, 2, 1), (2, 1), 2)
    assert y.dtype == np.int32
    np.testing.assert_array_equal(y, want)


def test_conv_integer_1d_without_zero_points(tmp_path):
    x, w = integers(np.int8, (2, 3, 10)), integers(np.int8, (4, 3, 3))
    path = save(tmp_path, "ConvInteger", {"x": x}, {"w": w}, 10, auto_pad="SAME_UPPER")
    (y,) = both_ways(tmp_path, path, x=x)
    want = conv_reference(x[:, :, None, :], w[:, :, None, :], (0, 1, 0, 1))[:, :, 0, :]
    np.testing.assert_array_equal(y, want)


# ---- QLinearMatMul, QLinearConv ---------------------------------------------

def assert_requantized(got, exact, zero_point, dtype):
    """`got` is saturate(round(exact) + zero_point), `exact` the float64
    value of accumulator * a_scale * b_scale / y_scale. The converter computes
    it in float32, so an element within float32's rounding of a half may
    round the other way: those may differ by one, the rest must be equal."""
    low, high = RANGES[dtype]
    want = np.clip(np.rint(exact) + zero_point, low, high)
    near_half = np.abs(np.abs(exact - np.floor(exact)) - 0.5) < 1e-5 * np.maximum(np.abs(exact), 1)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got[~near_half], want[~near_half])
    assert np.all(np.abs(got.astype(np.int64) - want)[near_half] <= 1)


@pytest.mark.parametrize("opset", [10, 21])
@pytest.mark.parametrize("per_column", [False, True])
def test_qlinear_matmul(tmp_path, opset, per_column):
    a, b = integers(np.uint8, (3, 4, 16)), integers(np.int8, (16, 5))
    a_scale, a_zero_point = np.float32(0.02), np.uint8(120)
    b_scale = RNG.uniform(0.01, 0.05, 5).astype(np.float32) if per_column else np.float32(0.03)
    b_zero_point = integers(np.int8, (5,)) // 8 if per_column else np.int8(-3)
    y_scale, y_zero_point = np.float32(0.05), np.int8(10)
    inits = {"as": a_scale, "az": a_zero_point, "b": b, "bs": b_scale, "bz": b_zero_point, "ys": y_scale,
             "yz": y_zero_point}
    path = save(tmp_path, "QLinearMatMul", {"a": a}, inits, opset)
    (y,) = both_ways(tmp_path, path, a=a)
    accumulator = (a.astype(np.int64) - 120) @ (b.astype(np.int64) - b_zero_point)
    factor = np.float32(a_scale * b_scale) / y_scale  # as ONNX's reference: the scales in float32
    assert_requantized(y, accumulator * factor.astype(np.float64), 10, np.int8)
    assert (y == 127).any() or (y == -128).any()


# Split: the shift of x on cpu:0, the int32 convolution and the requantizing on cpu:1.
@pytest.mark.parametrize("devices,place", [(("cpu:0",), ()),
                                           (("cpu:0", "cpu:1"), ("op:subtract=cpu:0", "op:nn.conv2d=cpu:1"))])
def test_qlinear_conv_per_channel_with_bias(tmp_path, devices, place):
    x, w = integers(np.uint8, (1, 3, 9, 9)), integers(np.int8, (4, 3, 3, 3))
    x_scale, x_zero_point = np.float32(0.05), np.uint8(128)
    w_scale = np.array([0.01, 0.02, 0.005, 0.04], np.float32)
    w_zero_point = np.array([0, 3, -2, 1], np.int8)
    y_scale, y_zero_point = np.float32(0.2), np.uint8(100)
    bias = RNG.integers(-2000, 2000, 4).astype(np.int32)
    inits = {"xs": x_scale, "xz": x_zero_point, "w": w, "ws": w_scale, "wz": w_zero_point, "ys": y_scale,
             "yz": y_zero_point, "B": bias}
    path = save(tmp_path, "QLinearConv", {"x": x}, inits, 10, pads=[1, 1, 1, 1], strides=[2, 2])
    (y,) = both_ways(tmp_path, path, devices, place, x=x)
    accumulator = conv_reference(x.astype(np.int64) - 128, w.astype(np.int64) - w_zero_point.reshape(4, 1, 1, 1),
                                 (1, 1, 1, 1), (2, 2)) + bias.reshape(4, 1, 1)
    factor = (np.float32(x_scale) * w_scale / y_scale).reshape(4, 1, 1)
    assert_requantized(y, accumulator * factor.astype(np.float64), 100, np.uint8)
    assert (y == 0).any() and (y == 255).any()


# ---- Bad input --------------------------------------------------------------

def run_cli(*args):
    return subprocess.run([str(SWITCHYARD), *map(str, args)], capture_output=True, text=True)


def refuses(tmp_path, path, message):
    with pytest.raises(sy.ParseError, match=message):
        sy.frontend.from_onnx(path)
    result = run_cli("compile", path, "-o", tmp_path / "never")
    assert result.returncode == 1 and "node 'node'" in result.stderr, result.stderr
    assert not (tmp_path / "never").exists()


X = np.zeros((2, 3), np.float32)


def test_zero_scale_is_refused(tmp_path):
    path = save(tmp_path, "QuantizeLinear", {"x": X}, {"s": np.float32(0), "z": np.uint8(0)}, 13)
    refuses(tmp_path, path, r"node 'node' \(QuantizeLinear\): the scale is zero")
    path = save(tmp_path, "QuantizeLinear", {"x": X}, {"s": np.array([1, 0, 2], np.float32)}, 13, axis=1)
    refuses(tmp_path, path, "the scale is zero at element 1")
    q = np.zeros((1, 1, 3, 3), np.uint8)
    inits = {"xs": np.float32(1), "xz": np.uint8(0), "w": np.ones((1, 1, 1, 1), np.uint8), "ws": np.float32(1),
             "wz": np.uint8(0), "ys": np.float32(0), "yz": np.uint8(0)}
    path = save(tmp_path, "QLinearConv", {"x": q}, inits, 10)
    refuses(tmp_path, path, r"\(QLinearConv\): the output's scale is zero")


def test_zero_point_out_of_range_is_refused(tmp_path):
    # int32_data holds a uint8 tensor's values, and can hold more than uint8 does.
    zero_point = helper.make_tensor("z", TensorProto.UINT8, [], [300])
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="node")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, [2, 3])],
                              [numpy_helper.from_array(np.float32(1), "s"), zero_point])
    path = tmp_path / "range.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    refuses(tmp_path, path, r"tensor 'z': int32_data holds 300 at element 0, outside the range of UINT8 "
                            r"\(an input of node 'node' \(QuantizeLinear\)\)")


def test_per_axis_lengths_must_match(tmp_path):
    path = save(tmp_path, "QuantizeLinear", {"x": X}, {"s": np.ones(2, np.float32)}, 13, axis=1)
    refuses(tmp_path, path, r"the scale has shape \(2\), but must be one value or 3 \(one per element of axis 1\)")
    path = save(tmp_path, "DequantizeLinear", {"q": X.astype(np.int8)},
                {"s": np.ones(3, np.float32), "z": np.zeros(2, np.int8)}, 13, axis=1)
    refuses(tmp_path, path, "the input's scale holds 3 values but its zero point 2")
    path = save(tmp_path, "QuantizeLinear", {"x": X}, {"s": np.ones(3, np.float32)}, 10)
    refuses(tmp_path, path, "it must hold one value \\(one per axis came with version 13\\)")
    w = np.ones((4, 3, 1, 1), np.int8)
    path = save(tmp_path, "ConvInteger", {"x": np.zeros((1, 3, 2, 2), np.int8)}, {"w": w, "xz": None,
                "wz": np.zeros(3, np.int8)}, 10)
    refuses(tmp_path, path, r"w's zero point has shape \(3\), but must be one value or 4 \(one per output channel\)")
    inits = {"as": np.ones(4, np.float32), "az": np.zeros(4, np.uint8), "b": np.ones((3, 2), np.uint8),
             "bs": np.float32(1), "bz": np.uint8(0), "ys": np.float32(1), "yz": np.uint8(0)}
    path = save(tmp_path, "QLinearMatMul", {"a": np.zeros((4, 3), np.uint8)}, inits, 10)
    refuses(tmp_path, path, "a per-row scale is not supported")


def test_zero_point_dtype_must_match(tmp_path):
    path = save(tmp_path, "DequantizeLinear", {"q": X.astype(np.uint8)}, {"s": np.float32(1), "z": np.int8(0)}, 13)
    refuses(tmp_path, path, "the zero point is int8 but the input is uint8; they must match")
    a, b = np.zeros((2, 3), np.uint8), np.zeros((3, 2), np.int8)
    path = save(tmp_path, "MatMulInteger", {"a": a, "b": b}, {"az": np.int8(0)}, 10)
    refuses(tmp_path, path, "A's zero point is int8 but A is uint8; they must match")
    path = save(tmp_path, "QuantizeLinear", {"x": X}, {"s": np.float32(1), "z": np.int32(0)}, 13)
    refuses(tmp_path, path, "the zero point is int32; only int8 and uint8 quantization is supported")
    path = save(tmp_path, "QuantizeLinear", {"x": X}, {"s": np.float32(1), "z": np.int8(0)}, 21,
                output_dtype=TensorProto.UINT8)
    refuses(tmp_path, path, "the zero point is int8 but output_dtype is uint8")


def test_float8_and_int4_are_refused_naming_node_and_type(tmp_path):
    # Debian's onnx 1.12 predates these types: 17 is FLOAT8E4M3FN, 22 INT4.
    path = save(tmp_path, "QuantizeLinear", {"x": X}, {"s": np.float32(1)}, 21, output_dtype=17)
    refuses(tmp_path, path, "output_dtype FLOAT8E4M3FN is not supported \\(int8 and uint8 only\\)")
    zero_point = TensorProto(name="z", data_type=22, raw_data=b"\x00")
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="node")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)],
                              [numpy_helper.from_array(np.float32(1), "s"), zero_point])
    path = tmp_path / "int4.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), str(path))
    refuses(tmp_path, path, r"element type INT4 is not supported \(an input of node 'node' \(QuantizeLinear\)\)")


def test_blocked_quantization_is_refused(tmp_path):
    path = save(tmp_path, "QuantizeLinear", {"x": X}, {"s": np.ones((2, 1), np.float32)}, 21, axis=1,
                block_size=3)
    refuses(tmp_path, path, "blocked quantization \\(block_size > 0\\) is not supported")


# ---- A QDQ model ------------------------------------------------------------
# A tiny PyTorch CNN exported to ONNX, with the QuantizeLinear/DequantizeLinear
# pairs ONNX Runtime's static quantization would insert (scales calibrated on
# sample inputs), against the same model fake-quantized in PyTorch.

class TinyCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.head = torch.nn.Linear(16, 10)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        return self.head(x.mean(dim=(2, 3)))


def calibrate(model, samples):
    """Per conv, in order: uint8 (scale, zero point) covering the range its
    input reaches on the samples (and 0), as ONNX Runtime's MinMax calibration."""
    seen = []
    hooks = [conv.register_forward_pre_hook(lambda module, args: seen.append(args[0]))
             for conv in (model.conv1, model.conv2)]
    with torch.no_grad():
        model(samples)
    for hook in hooks:
        hook.remove()
    params = []
    for x in seen:
        low, high = min(0.0, float(x.min())), max(0.0, float(x.max()))
        scale = np.float32((high - low) / 255)
        params.append((scale, np.uint8(np.clip(np.rint(-low / scale), 0, 255))))
    return params


def int8_per_channel(w):
    scale = (np.abs(w).reshape(len(w), -1).max(axis=1) / 127).astype(np.float32)
    return np.clip(np.rint(w / scale.reshape(-1, 1, 1, 1)), -127, 127).astype(np.int8), scale


def insert_qdq(model, activations):
    """QuantizeLinear/DequantizeLinear pairs before each Conv: its input
    uint8 per tensor, its weight int8 per output channel (stored quantized)."""
    graph = model.graph
    weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    nodes, inits = [], []
    convs = [n for n in graph.node if n.op_type == "Conv"]
    assert len(convs) == len(activations)
    for node in graph.node:
        if node.op_type == "Conv":
            k = convs.index(node)
            (scale, zero_point), p = activations[k], f"qdq{k}_"
            q_weight, w_scale = int8_per_channel(weights[node.input[1]])
            inits += [numpy_helper.from_array(v, p + n) for n, v in
                      [("s", scale), ("z", zero_point), ("w", q_weight), ("ws", w_scale),
                       ("wz", np.zeros(len(w_scale), np.int8))]]
            nodes += [helper.make_node("QuantizeLinear", [node.input[0], p + "s", p + "z"], [p + "q"], name=p + "q"),
                      helper.make_node("DequantizeLinear", [p + "q", p + "s", p + "z"], [p + "x"], name=p + "dq"),
                      helper.make_node("DequantizeLinear", [p + "w", p + "ws", p + "wz"], [p + "wf"], axis=0,
                                       name=p + "wdq")]
            node.input[0], node.input[1] = p + "x", p + "wf"
        nodes.append(node)
    used = {name for n in nodes for name in n.input}
    kept = [t for t in graph.initializer if t.name in used]
    del graph.node[:], graph.initializer[:]
    graph.node.extend(nodes)
    graph.initializer.extend(kept + inits)
    return model


def fake_quantized(model, activations):
    """The PyTorch model computing what the QDQ model does: conv inputs
    quantized and dequantized (halves to even, x / scale in float32), weights
    dequantized from int8."""
    for conv, (scale, zero_point) in zip((model.conv1, model.conv2), activations):
        q_weight, w_scale = int8_per_channel(conv.weight.detach().numpy())
        conv.weight.data = torch.from_numpy(q_weight.astype(np.float32) * w_scale.reshape(-1, 1, 1, 1))
        s, z = torch.tensor(scale), float(zero_point)

        def quantize_input(module, args, s=s, z=z):
            return (torch.clamp(torch.round(args[0] / s) + z, 0, 255) - z) * s
        conv.register_forward_pre_hook(quantize_input)
    return model


def test_qdq_cnn_matches_pytorch(tmp_path):
    torch.manual_seed(0)
    model = TinyCnn().eval()
    samples = torch.randn(8, 3, 12, 12)
    activations = calibrate(model, samples)
    with torch.no_grad():
        float_output = model(samples[:2]).numpy()
    path = tmp_path / "cnn.onnx"
    torch.onnx.export(model, samples[:2], str(path), input_names=["x"], output_names=["y"], opset_version=13)
    onnx.save(insert_qdq(onnx.load(str(path)), activations), str(path))
    with torch.no_grad():
        want = fake_quantized(model, activations)(samples[:2]).numpy()
    x = samples[:2].numpy()
    mod = sy.frontend.from_onnx(path)
    interpreted = sy.evaluate(mod, x=x)
    sy.build(mod, ["cpu:0"], tmp_path / "artifact")
    compiled = sy.runtime.load(tmp_path / "artifact").run(x=x)
    magnitude = np.abs(want).max()
    for got in (interpreted, compiled):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * magnitude)
    # The quantization shows: the float model's output is ten times farther off than that.
    assert np.abs(float_output - want).max() > 1e-4 * magnitude
