# QDQ graphs, ONNX Runtime's static quantization format: DequantizeLinear of
# an int8/uint8 activation and of int8 weights (per tensor or per output
# channel) and int32 bias -> Conv / MatMul / Gemm (-> Relu) ->
# QuantizeLinear. Compiled and interpreted against an integer reference of
# ONNX's formula: the product of the dequantized operands is computed in
# float, so an output may land one quantum off the exact integer result
# where the real value lies within float32's rounding of a half (ONNX
# Runtime's own tests accept one quantum); every other element must be
# exact. The cases a fused int8 kernel must refuse (a non-zero weight zero
# point, a dequantized value read twice) are here too and must stay exact.
import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

import switchyard as sy

RNG = np.random.default_rng(3636)
RANGES = {np.int8: (-128, 127), np.uint8: (0, 255)}


def integers(dtype, shape, low=None, high=None):
    lo, hi = RANGES[dtype]
    return RNG.integers(lo if low is None else low, (hi if high is None else high) + 1, shape).astype(dtype)


class Graph:
    """A QDQ graph built node by node with onnx.helper."""

    def __init__(self):
        self.nodes, self.inits = [], []

    def constant(self, name, value):
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def dequantize(self, name, q, scale, zero_point, axis=None):
        inputs = [q, self.constant(name + "_s", scale), self.constant(name + "_z", zero_point)]
        self.nodes.append(helper.make_node("DequantizeLinear", inputs, [name], name=name,
                                           **({} if axis is None else {"axis": axis})))
        return name

    def node(self, op, inputs, output, **attrs):
        self.nodes.append(helper.make_node(op, inputs, [output], name=output, **attrs))
        return output

    def save(self, path, x, outputs):
        graph = helper.make_graph(
            self.nodes, "qdq", [helper.make_tensor_value_info("x", onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[x.dtype],
                                                              x.shape)],
            [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outputs], self.inits)
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
        return path


class Case:
    """A quantized product's parameters: x (int8 or uint8) with scale and zero
    point, int8 weights w with scales (and zero points) per output channel or
    per tensor, int32 bias, output dtype, scale and zero point."""

    def __init__(self, x_dtype, w_shape, x_shape, channels_axis, per_channel, y_dtype=np.uint8, w_zero=0):
        out_channels = w_shape[channels_axis]
        self.x = integers(x_dtype, x_shape)
        self.x_scale, self.x_zero = np.float32(0.02), x_dtype(RANGES[x_dtype][0] + 100)
        self.w = integers(np.int8, w_shape, -127, 127)
        self.w_scale = np.asarray(RNG.uniform(0.002, 0.01, out_channels if per_channel else None), np.float32)
        self.w_zero = np.full(out_channels, w_zero, np.int8) if per_channel else np.int8(w_zero)
        self.bias = RNG.integers(-3000, 3000, out_channels).astype(np.int32)
        self.y_dtype = y_dtype
        self.y_scale, self.y_zero = np.float32(0.02), y_dtype(RANGES[y_dtype][0] + 60)
        self.channels_axis = channels_axis

    def graph(self, op, relu=False, **attrs):
        g = Graph()
        x = g.dequantize("x_dq", "x", self.x_scale, self.x_zero)
        w = g.dequantize("w_dq", g.constant("w", self.w), self.w_scale, self.w_zero,
                         self.channels_axis if self.w_scale.ndim else None)
        bias_scale = (self.x_scale * self.w_scale).astype(np.float32)
        inputs = [x, w]
        if op != "MatMul":
            b_zero = np.zeros(self.bias.shape, np.int32) if bias_scale.ndim else np.int32(0)
            inputs.append(g.dequantize("b_dq", g.constant("b", self.bias), bias_scale, b_zero,
                                       0 if bias_scale.ndim else None))
        y = g.node(op, inputs, "product", **attrs)
        if relu:
            y = g.node("Relu", [y], "relu")
        inputs = [y, g.constant("y_s", self.y_scale), g.constant("y_z", self.y_zero)]
        g.node("QuantizeLinear", inputs, "y")
        return g

    def requantize(self, accumulator, relu):
        """ONNX's output from the exact int64 accumulator (bias included), in
        float64, and where it lies within float32's rounding of a half."""
        real = accumulator * (np.float64(self.x_scale) * self.w_scale_along(accumulator.ndim))
        if relu:
            real = np.maximum(real, 0)
        exact = real / np.float64(self.y_scale)
        low, high = RANGES[self.y_dtype]
        want = np.clip(np.rint(exact) + int(self.y_zero), low, high)
        near_half = np.abs(np.abs(exact - np.floor(exact)) - 0.5) < 1e-5 * np.maximum(np.abs(exact), 1)
        return want, near_half

    def w_scale_along(self, rank):
        s = self.w_scale.astype(np.float64)
        if s.ndim == 0:
            return s
        axis = 1 if rank > 2 else rank - 1  # NCHW channels, or the last axis of a matrix product
        return s.reshape((-1,) + (1,) * (rank - 1 - axis))


def check(tmp_path, case, g, accumulator, relu, outputs=("y",)):
    """Interpreter and compiled artifact against the reference (exact but
    where the real value is within float32's rounding of a half), and within
    one quantum of each other."""
    path = g.save(tmp_path / "model.onnx", case.x, outputs)
    mod = sy.frontend.from_onnx(path)
    interpreted = sy.evaluate(mod, x=case.x)
    sy.build(mod, ["cpu:0"], tmp_path / "artifact")
    compiled = sy.runtime.load(tmp_path / "artifact").run(x=case.x)
    interpreted = interpreted if isinstance(interpreted, (list, tuple)) else [interpreted]
    compiled = compiled if isinstance(compiled, (list, tuple)) else [compiled]
    want, near_half = case.requantize(accumulator, relu)
    for got in (interpreted[0], compiled[0]):
        assert got.dtype == case.y_dtype
        np.testing.assert_array_equal(got[~near_half], want[~near_half])
        assert np.abs(got.astype(np.int64) - want).max() <= 1
    low, high = RANGES[case.y_dtype]
    interior = (want > low) & (want < high)
    assert interior.any() and not interior.all()  # both saturation and the interior are exercised
    return interpreted, compiled


def conv_accumulator(case, pads, strides, group=1):
    top, left, bottom, right = pads
    x = np.pad(case.x.astype(np.float64) - int(case.x_zero), ((0, 0), (0, 0), (top, bottom), (left, right)))
    w = case.w.astype(np.float64) - case.w_zero.astype(np.float64).reshape((-1,) + (1,) * (case.w_zero.ndim * 3))
    y = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), stride=strides, groups=group).numpy()
    return y.astype(np.int64) + case.bias.reshape(-1, 1, 1)


@pytest.mark.parametrize("x_dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("per_channel", [True, False])
@pytest.mark.parametrize("relu", [False, True])
def test_qdq_conv(tmp_path, x_dtype, per_channel, relu):
    case = Case(x_dtype, (8, 6, 3, 3), (2, 6, 9, 9), 0, per_channel, y_dtype=np.uint8 if relu else np.int8)
    g = case.graph("Conv", relu, pads=[1, 1, 1, 1], strides=[2, 2])
    check(tmp_path, case, g, conv_accumulator(case, (1, 1, 1, 1), (2, 2)), relu)


def test_qdq_grouped_conv_pads_with_the_zero_point(tmp_path):
    case = Case(np.uint8, (8, 3, 3, 3), (1, 6, 7, 8), 0, True)
    case.x[:] = case.x_zero  # real zero everywhere but one corner: a padding of raw 0 would show
    case.x[0, :, :2, :2] = 255
    g = case.graph("Conv", pads=[2, 1, 0, 1], strides=[1, 2], group=2)
    check(tmp_path, case, g, conv_accumulator(case, (2, 1, 0, 1), (1, 2), 2), False)


@pytest.mark.parametrize("x_dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("per_channel", [True, False])
def test_qdq_matmul(tmp_path, x_dtype, per_channel):
    case = Case(x_dtype, (40, 12), (5, 40), 1, per_channel)
    case.bias[:] = 0  # MatMul has no bias
    g = case.graph("MatMul")
    accumulator = (case.x.astype(np.int64) - int(case.x_zero)) @ case.w.astype(np.int64)
    check(tmp_path, case, g, accumulator, False)


def test_qdq_gemm_transposed_weights_with_relu(tmp_path):
    case = Case(np.uint8, (12, 40), (5, 40), 0, True)
    g = case.graph("Gemm", relu=True, transB=1)
    accumulator = (case.x.astype(np.int64) - int(case.x_zero)) @ case.w.astype(np.int64).T + case.bias
    check(tmp_path, case, g, accumulator, True)


def test_qdq_conv_with_weight_zero_point_stays_exact(tmp_path):
    """Asymmetric int8 weights: an int8 kernel with a zero weight zero point cannot compute this."""
    case = Case(np.uint8, (8, 6, 3, 3), (1, 6, 8, 8), 0, True, w_zero=5)
    g = case.graph("Conv", pads=[1, 1, 1, 1])
    check(tmp_path, case, g, conv_accumulator(case, (1, 1, 1, 1), (1, 1)), False)


def test_qdq_conv_whose_dequantized_input_is_read_twice(tmp_path):
    """The dequantized activation is also a graph output: it must keep its float value."""
    case = Case(np.uint8, (8, 6, 3, 3), (1, 6, 8, 8), 0, True)
    g = case.graph("Conv", pads=[1, 1, 1, 1])
    interpreted, compiled = check(tmp_path, case, g, conv_accumulator(case, (1, 1, 1, 1), (1, 1)), False,
                                  outputs=("y", "x_dq"))
    want = (case.x.astype(np.float32) - np.float32(case.x_zero)) * case.x_scale
    for got in (interpreted[1], compiled[1]):
        np.testing.assert_array_equal(got, want)
