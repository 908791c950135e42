# Operator versions older than opset 7 whose meaning differs from the
# version opset 7 selects (what PyTorch's opset 6 exports hold): Add, Sub,
# Mul, Div, Pow and the comparisons broadcast only with broadcast=1, the
# second input aligned at `axis`; Gemm-6 broadcasts C only so; PRelu-6's
# slope is one value or one per channel; BatchNormalization-6 converts
# is_test=1 only; AveragePool-1 never counts padding; version 1's
# consumed_inputs is a hint. One-node models against NumPy through the
# interpreter, one model of all of them compiled, and each refusal naming
# the node.
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import switchyard as sy

RNG = np.random.default_rng(61)


def random(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def element_type(dtype):
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]


def save_node(path, op, opset, feeds, inits=(), **attrs):
    """A one-node model named 'old' reading `feeds` (graph inputs), then `inits`."""
    inits = list(inits)
    node = helper.make_node(op, list(feeds) + [n for n, _ in inits], ["y"], name="old", **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(n, element_type(v.dtype), v.shape) for n, v in feeds.items()],
        [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)],
        [numpy_helper.from_array(v, n) for n, v in inits])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), str(path))
    return path


def run(tmp_path, op, opset, feeds, inits=(), **attrs):
    path = save_node(tmp_path / f"{op}.onnx", op, opset, feeds, inits, **attrs)
    return sy.evaluate(sy.frontend.from_onnx(path), **feeds)


def refused(tmp_path, op, opset, feeds, inits=(), **attrs):
    path = save_node(tmp_path / f"{op}.onnx", op, opset, feeds, inits, **attrs)
    with pytest.raises(sy.ParseError, match=rf"node 'old' \({op}\)") as caught:
        sy.frontend.from_onnx(path)
    return str(caught.value)


def close(actual, expected):
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)


NUMPY = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}

# (A's shape, B's shape, axis or None, B as NumPy broadcasts it to A): the
# shapes of ONNX's Add-6 examples, and PyTorch's size-1 exports.
BROADCASTS = [
    ((2, 3, 4, 5), (), None, ()),
    ((2, 3, 4, 5), (1, 1), None, ()),
    ((2, 3, 4, 5), (5,), None, (5,)),
    ((2, 3, 4, 5), (4, 5), None, (4, 5)),
    ((2, 3, 4, 5), (3, 4), 1, (3, 4, 1)),
    ((2, 3, 4, 5), (2,), 0, (2, 1, 1, 1)),
    ((2, 3), (2, 1), 0, (2, 1)),
    ((2, 3), (1, 3), 0, (1, 3)),
    ((2, 3), (3,), 1, (3,)),
]


@pytest.mark.parametrize("op", sorted(NUMPY))
@pytest.mark.parametrize("a_shape,b_shape,axis,aligned", BROADCASTS)
def test_arithmetic_6_broadcasts_the_second_input_from_axis(tmp_path, op, a_shape, b_shape, axis, aligned):
    a, b = random(*a_shape), (np.abs(random(*b_shape)) + 0.5).astype(np.float32)
    attrs = {"broadcast": 1} if axis is None else {"broadcast": 1, "axis": axis}
    close(run(tmp_path, op, 6, {"a": a, "b": b}, **attrs), NUMPY[op](a, b.reshape(aligned)))


def test_arithmetic_1_ignores_consumed_inputs_and_without_broadcast_needs_equal_shapes(tmp_path):
    a, b = random(2, 3), random(2, 3)
    close(run(tmp_path, "Mul", 1, {"a": a, "b": b}, consumed_inputs=[0, 0]), a * b)
    close(run(tmp_path, "Sub", 6, {"a": a, "b": b}), a - b)
    message = refused(tmp_path, "Add", 6, {"a": a, "b": random(3)})
    assert "the inputs' shapes (2, 3) and (3) differ, and Add-6 broadcasts only with broadcast=1" in message
    message = refused(tmp_path, "Add", 6, {"a": a, "b": random(2)}, broadcast=1)
    assert "input 1's shape (2) does not match input 0's (2, 3) from axis 1" in message
    message = refused(tmp_path, "Div", 6, {"a": a, "b": random(3)}, broadcast=1, axis=0)
    assert "input 1's shape (3) does not match input 0's (2, 3) from axis 0" in message
    assert "axis 2 is out of range for rank 2" in refused(tmp_path, "Add", 6, {"a": a, "b": random(3)}, broadcast=1, axis=2)
    # consumed_inputs is version 1's only.
    assert "attribute 'consumed_inputs' is not supported (Add-6" in refused(
        tmp_path, "Add", 6, {"a": a, "b": b}, consumed_inputs=[0, 0])


def test_comparisons_logic_and_pow_before_7_broadcast_by_attribute(tmp_path):
    a, b = random(2, 3, 4), random(3)
    close(run(tmp_path, "Less", 1, {"a": a, "b": b}, broadcast=1, axis=1), a < b.reshape(3, 1))
    close(run(tmp_path, "Greater", 1, {"a": a, "b": b}, broadcast=1, axis=1), a > b.reshape(3, 1))
    x, y = a > 0, np.array([True, False, True])
    np.testing.assert_array_equal(run(tmp_path, "Or", 1, {"x": x, "y": y}, broadcast=1, axis=1), x | y.reshape(3, 1))
    np.testing.assert_array_equal(run(tmp_path, "Xor", 1, {"x": x, "y": x}), x ^ x)
    base, exponent = np.abs(a) + 0.1, random(2, 3)
    close(run(tmp_path, "Pow", 6, {"x": base, "e": exponent}, broadcast=1, axis=0),
          np.power(base, exponent.reshape(2, 3, 1)))
    assert "Pow-1 broadcasts only with broadcast=1" in refused(tmp_path, "Pow", 6, {"x": base, "e": exponent})


def test_gemm_6_broadcasts_c_only_with_broadcast_1(tmp_path):
    a, b = random(4, 3), random(5, 3)
    bias, full = random(5), random(4, 5)
    close(run(tmp_path, "Gemm", 6, {"a": a, "b": b}, [("c", bias)], broadcast=1, transB=1, alpha=0.5),
          0.5 * a @ b.T + bias)
    close(run(tmp_path, "Gemm", 1, {"a": a, "b": b}, [("c", full)], transB=1, beta=2.0), a @ b.T + 2 * full)
    close(run(tmp_path, "Gemm", 6, {"a": a, "b": b}, [("c", full)], transB=1, beta=0.0), a @ b.T)
    message = refused(tmp_path, "Gemm", 6, {"a": a, "b": b}, [("c", bias)], transB=1)
    assert "C's shape (5) is not the product's (4, 5), and Gemm-6 broadcasts C only with broadcast=1" in message


@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 4), (2, 3, 4, 5), (2, 3, 2, 2, 2)])
@pytest.mark.parametrize("per_channel", [False, True])
def test_prelu_6_slope_is_one_value_or_one_per_channel(tmp_path, shape, per_channel):
    x = random(*shape)
    slope = random(shape[1]) if per_channel else random(1)
    aligned = slope.reshape([shape[1]] + [1] * (len(shape) - 2)) if per_channel else slope
    close(run(tmp_path, "PRelu", 6, {"x": x}, [("slope", slope)]), np.where(x < 0, x * aligned, x))


def test_prelu_1_and_its_refusals(tmp_path):
    x, slope = random(2, 3, 4), random(3)
    close(run(tmp_path, "PRelu", 1, {"x": x}, [("slope", slope)], consumed_inputs=[0]),
          np.where(x < 0, x * slope.reshape(3, 1), x))
    message = refused(tmp_path, "PRelu", 6, {"x": x}, [("slope", random(4))])
    assert "the slope's shape (4) is neither one value nor one per channel of (2, 3, 4) (PRelu-6)" in message
    assert "neither one value nor one per channel" in refused(tmp_path, "PRelu", 6, {"x": x}, [("slope", random(3, 4))])


def batch_norm_inputs(channels):
    var = np.abs(random(channels)) + 0.5
    return [("s", random(channels)), ("b", random(channels)), ("m", random(channels)), ("v", var)]


@pytest.mark.parametrize("opset,shape", [(6, (2, 3, 4, 5)), (6, (4, 3, 5)), (6, (2, 3, 2, 2, 2)), (1, (2, 3, 4, 5))])
def test_batch_normalization_6_in_test_mode(tmp_path, opset, shape):
    x = random(*shape)
    inits = batch_norm_inputs(3)
    s, b, m, v = (value.reshape([3] + [1] * (len(shape) - 2)) for _, value in inits)
    attrs = {"is_test": 1, "epsilon": 1e-3, "momentum": 0.3}
    if opset == 1:
        attrs["consumed_inputs"] = [0, 0, 0, 1, 1]
    close(run(tmp_path, "BatchNormalization", opset, {"x": x}, inits, **attrs), (x - m) / np.sqrt(v + 1e-3) * s + b)


def test_batch_normalization_6_refuses_training_and_spatial_0(tmp_path):
    x, inits = random(2, 3, 4, 5), batch_norm_inputs(3)
    for attrs in [{}, {"is_test": 0}]:
        assert "is_test=0 (training: the batch's own statistics) is not supported (inference only" in refused(
            tmp_path, "BatchNormalization", 6, {"x": x}, inits, **attrs)
    assert "spatial=0 is not supported (BatchNormalization-6: statistics per channel only)" in refused(
        tmp_path, "BatchNormalization", 6, {"x": x}, inits, is_test=1, spatial=0)


def test_average_pool_1_never_counts_padding(tmp_path):
    x = random(1, 2, 5, 5)
    got = run(tmp_path, "AveragePool", 6, {"x": x}, kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    want = np.zeros((1, 2, 5, 5), np.float32)
    for i in range(5):
        for j in range(5):
            want[:, :, i, j] = x[:, :, max(i - 1, 0):i + 2, max(j - 1, 0):j + 2].mean(axis=(2, 3))
    close(got, want)
    assert "attribute 'count_include_pad' is not supported (AveragePool-1, the version in opset 6)" in refused(
        tmp_path, "AveragePool", 6, {"x": x}, kernel_shape=[3, 3], count_include_pad=0)


def test_an_opset_6_model_of_old_versions_compiles_and_matches_numpy(tmp_path):
    """Gemm-6, Add-6 with an axis, PRelu-6, BatchNormalization-6, Pow-1 and
    AveragePool-1 in one model, built for cpu:0 and split over cpu:0 and
    cpu:1."""
    x = random(2, 12)
    w, bias, slope = random(48, 12), random(48), random(3)
    channel_bias, exponent = random(3), np.array([2.0], np.float32)
    bn = batch_norm_inputs(3)
    nodes = [helper.make_node("Gemm", ["x", "w", "bias"], ["g"], name="fc", broadcast=1, transB=1),
             helper.make_node("Reshape", ["g", "shape"], ["r"], name="reshape"),
             helper.make_node("Add", ["r", "channel_bias"], ["a"], name="add", broadcast=1, axis=1),
             helper.make_node("PRelu", ["a", "slope"], ["p"], name="prelu"),
             helper.make_node("BatchNormalization", ["p", "s", "b", "m", "v"], ["n"], name="bn", is_test=1),
             helper.make_node("Pow", ["n", "exponent"], ["q"], name="square", broadcast=1),
             helper.make_node("AveragePool", ["q"], ["y"], name="pool", kernel_shape=[2, 2], pads=[1, 1, 1, 1],
                              strides=[2, 2])]
    inits = [("w", w), ("bias", bias), ("shape", np.array([2, 3, 4, 4], np.int64)), ("channel_bias", channel_bias),
             ("slope", slope), ("exponent", exponent)] + bn
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(v, n) for n, v in inits])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 6)]), str(tmp_path / "m.onnx"))

    column = lambda v: v.reshape(3, 1, 1)
    a = (x @ w.T + bias).reshape(2, 3, 4, 4) + column(channel_bias)
    p = np.where(a < 0, a * column(slope), a)
    s, b, m, v = (column(value) for _, value in bn)
    q = ((p - m) / np.sqrt(v + 1e-5) * s + b) ** 2
    padded = np.pad(q, [(0, 0), (0, 0), (1, 1), (1, 1)], constant_values=np.nan)
    want = np.nanmean(padded.reshape(2, 3, 3, 2, 3, 2).transpose(0, 1, 2, 4, 3, 5).reshape(2, 3, 3, 3, 4), axis=-1)

    mod = sy.frontend.from_onnx(tmp_path / "m.onnx")
    close(sy.evaluate(mod, x=x), want)
    for name, devices, place in [("one", ["cpu:0"], []), ("split", ["cpu:0", "cpu:1"], ["node:bn=cpu:1"])]:
        sy.build(mod, devices, tmp_path / name, place=place)
        got = sy.runtime.load(tmp_path / name).run(x=x)
        close(got[0] if isinstance(got, (list, tuple)) else got, want)
