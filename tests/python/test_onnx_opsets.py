# The ONNX importer across opsets 1 to 21: each operator version's own
# semantics (an attribute that became an input, Softmax's 2-D view before
# opset 13, Upsample and Resize-10's rounding, the opset 18 axes inputs,
# the functions added through opset 21) on one-node models built with
# onnx.helper, against NumPy references written from the ONNX
# specification; and the refusals: an attribute a version does not have, a
# deprecated version, an operator newer than the model's opset, each naming
# the node and the version (the CLI exits 1 and writes nothing).
import os
import pathlib
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import switchyard as sy

REPO = pathlib.Path(__file__).resolve().parents[2]
SWITCHYARD = pathlib.Path(os.environ.get("SY_BUILD_DIR", REPO / "build")) / "bin" / "switchyard"
RNG = np.random.default_rng(23)


def random(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def i64(values):
    return np.array(values, np.int64)


def element_type(dtype):
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]  # onnx 1.12 has no helper for it


def save_node(path, op, opset, feeds, inits=(), inputs=None, outputs=("y",), **attrs):
    """A one-node model: graph inputs `feeds` (name -> array), initializers
    `inits` (name, array); the node reads `inputs` (default: feeds, then inits)."""
    inits = list(inits)
    names = inputs if inputs is not None else list(feeds) + [name for name, _ in inits]
    node = helper.make_node(op, names, list(outputs), name="node", **attrs)
    graph_inputs = [helper.make_tensor_value_info(n, element_type(v.dtype), v.shape) for n, v in feeds.items()]
    graph_outputs = [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outputs]
    graph = helper.make_graph([node], "g", graph_inputs, graph_outputs,
                              [numpy_helper.from_array(v, n) for n, v in inits])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), str(path))
    return path


def run(tmp_path, op, opset, feeds, inits=(), inputs=None, outputs=("y",), **attrs):
    path = save_node(tmp_path / f"{op}_{opset}.onnx", op, opset, feeds, inits, inputs, outputs, **attrs)
    return sy.evaluate(sy.frontend.from_onnx(path), **feeds)


def refusal(tmp_path, op, opset, feeds, inits=(), inputs=None, outputs=("y",), **attrs):
    path = save_node(tmp_path / f"{op}_{opset}.onnx", op, opset, feeds, inits, inputs, outputs, **attrs)
    with pytest.raises(sy.ParseError) as caught:
        sy.frontend.from_onnx(path)
    return str(caught.value)


def close(actual, expected):
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5 * max(1.0, float(np.abs(expected).max())))


# ---- Softmax, LogSoftmax, Hardmax: a 2-D view before opset 13 -------------------

def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def hardmax(x, axis):
    axis %= x.ndim
    index = np.expand_dims(np.argmax(x, axis=axis), axis)
    return (np.arange(x.shape[axis]).reshape([-1 if a == axis else 1 for a in range(x.ndim)]) == index).astype(x.dtype)


def coerced_2d(f, x, axis):
    rows = int(np.prod(x.shape[:axis]))
    return f(x.reshape(rows, -1), 1).reshape(x.shape)


REFERENCES = {"Softmax": softmax, "LogSoftmax": lambda x, a: np.log(softmax(x, a)), "Hardmax": hardmax}


@pytest.mark.parametrize("op", sorted(REFERENCES))
@pytest.mark.parametrize("opset,axis", [(7, None), (11, None), (12, 2), (12, -2), (11, 0), (13, None), (13, 1)])
def test_softmax_family_sees_2d_before_opset_13(tmp_path, op, opset, axis):
    x = random(2, 3, 4)
    attrs = {} if axis is None else {"axis": axis}
    got = run(tmp_path, op, opset, {"x": x}, **attrs)
    f = REFERENCES[op]
    if opset < 13:
        want = coerced_2d(f, x, (1 if axis is None else axis) % 3)
    else:
        want = f(x, -1 if axis is None else axis)
    close(got, want)


# ---- Axes: attributes before 13 (Squeeze, Unsqueeze, Split, ReduceSum) or 18 --------

def test_squeeze_and_unsqueeze_axes_attribute_before_opset_13(tmp_path):
    x = random(3, 1, 4, 1)
    assert run(tmp_path, "Squeeze", 11, {"x": x}, axes=[-1]).shape == (3, 1, 4)
    assert run(tmp_path, "Squeeze", 7, {"x": x}).shape == (3, 4)
    assert run(tmp_path, "Unsqueeze", 12, {"x": x}, axes=[0, -1]).shape == (1, 3, 1, 4, 1, 1)
    assert run(tmp_path, "Unsqueeze", 13, {"x": x}, inits=[("axes", i64([0]))]).shape == (1, 3, 1, 4, 1)
    assert "attribute 'axes' is not supported (Squeeze-13, the version in opset 13)" in refusal(
        tmp_path, "Squeeze", 13, {"x": x}, axes=[1])


@pytest.mark.parametrize("op,numpy_op", [("ReduceMean", np.mean), ("ReduceSum", np.sum), ("ReduceMax", np.max),
                                         ("ReduceL2", lambda x, axis, keepdims: np.sqrt((x * x).sum(axis, keepdims=keepdims)))])
def test_reductions_take_axes_as_attribute_then_input(tmp_path, op, numpy_op):
    x = random(2, 3, 4)
    input_from = 13 if op == "ReduceSum" else 18
    for opset in (7, 11, input_from - 1):
        close(run(tmp_path, op, opset, {"x": x}, axes=[0, -1], keepdims=0), numpy_op(x, axis=(0, 2), keepdims=False))
        close(run(tmp_path, op, opset, {"x": x}), numpy_op(x, axis=None, keepdims=True))
    for opset in (input_from, 21):
        close(run(tmp_path, op, opset, {"x": x}, inits=[("axes", i64([1]))]), numpy_op(x, axis=1, keepdims=True))
        close(run(tmp_path, op, opset, {"x": x}, keepdims=0), numpy_op(x, axis=None, keepdims=False))
        close(run(tmp_path, op, opset, {"x": x}, noop_with_empty_axes=1), x)
        text = refusal(tmp_path, op, opset, {"x": x}, axes=[1])
        assert f"node 'node' ({op}): attribute 'axes' is not supported ({op}-" in text, text


def test_split_sizes_attribute_input_and_num_outputs(tmp_path):
    x = random(7, 2)
    parts = ("a", "b", "c")
    got = run(tmp_path, "Split", 11, {"x": x}, outputs=parts, split=[2, 4, 1])
    for g, w in zip(got, np.split(x, [2, 6])):
        close(g, w)
    got = run(tmp_path, "Split", 13, {"x": x}, inits=[("s", i64([1, 1, 5]))], outputs=parts)
    for g, w in zip(got, np.split(x, [1, 2])):
        close(g, w)
    # Opset 18: num_outputs parts of ceil(7 / 3), the last one smaller.
    got = run(tmp_path, "Split", 18, {"x": x}, outputs=parts, num_outputs=3)
    assert [g.shape[0] for g in got] == [3, 3, 1]
    for g, w in zip(got, np.split(x, [3, 6])):
        close(g, w)
    assert "attribute 'num_outputs' is not supported (Split-13" in refusal(tmp_path, "Split", 17, {"x": x[:6]},
                                                                           outputs=parts, num_outputs=3)
    assert "num_outputs is 2, but the node has 3 outputs" in refusal(tmp_path, "Split", 18, {"x": x},
                                                                     outputs=parts, num_outputs=2)


# ---- Clip, Pad, Slice: attributes before 11 (Slice: 10) --------------------------

def test_clip_bounds_are_attributes_before_opset_11(tmp_path):
    x = random(3, 4) * 3
    close(run(tmp_path, "Clip", 10, {"x": x}, min=-1.0, max=0.5), np.clip(x, -1, 0.5))
    close(run(tmp_path, "Clip", 7, {"x": x}, min=0.0), np.maximum(x, 0))
    close(run(tmp_path, "Clip", 7, {"x": x}), x)
    close(run(tmp_path, "Clip", 11, {"x": x}, inits=[("lo", np.array(-0.5, np.float32))]), np.maximum(x, -0.5))
    assert "attribute 'min' is not supported (Clip-11" in refusal(tmp_path, "Clip", 11, {"x": x}, min=0.0)


def test_pad_attributes_before_opset_11_then_axes_and_wrap(tmp_path):
    x = random(2, 3, 4)
    close(run(tmp_path, "Pad", 10, {"x": x}, pads=[0, 1, 2, 0, 1, 0], value=1.5),
          np.pad(x, [(0, 0), (1, 1), (2, 0)], constant_values=1.5))
    close(run(tmp_path, "Pad", 7, {"x": x}, pads=[0, 1, 2, 0, 2, 3], mode="reflect"),
          np.pad(x, [(0, 0), (1, 2), (2, 3)], mode="reflect"))
    # Opset 18: pads for the axes input's axes only.
    close(run(tmp_path, "Pad", 18, {"x": x}, inits=[("pads", i64([1, 2, 0, 3])), ("v", np.array(2, np.float32)),
                                                     ("axes", i64([-1, 1]))]),
          np.pad(x, [(0, 0), (2, 3), (1, 0)], constant_values=2))
    # Opset 19: wrap-around, periodic also where a pad is wider than the axis
    # (NumPy before 1.25 is not, so the reference indexes by hand).
    got = run(tmp_path, "Pad", 19, {"x": x}, inits=[("pads", i64([0, 2, 1, 0, 1, 6]))], mode="wrap")
    close(got, x[:, np.arange(-2, 4) % 3][:, :, np.arange(-1, 10) % 4])
    assert "mode 'wrap' is not one of constant, reflect, edge" in refusal(
        tmp_path, "Pad", 18, {"x": x}, inits=[("pads", i64([0] * 6))], mode="wrap")
    assert "attribute 'pads' is not supported (Pad-11" in refusal(
        tmp_path, "Pad", 11, {"x": x}, inits=[("p", i64([0] * 6))], pads=[0] * 6)


def test_slice_attributes_before_opset_10(tmp_path):
    x = random(4, 5, 6)
    close(run(tmp_path, "Slice", 9, {"x": x}, starts=[1, -4], ends=[2**62, -1], axes=[2, 0]), x[:-1, :, 1:])
    close(run(tmp_path, "Slice", 7, {"x": x}, starts=[0, 1], ends=[2, 3]), x[0:2, 1:3])
    close(run(tmp_path, "Slice", 10, {"x": x}, inits=[("s", i64([3])), ("e", i64([0])), ("a", i64([1])),
                                                       ("st", i64([-2]))]), x[:, 3:0:-2])


# ---- Upsample and Resize-10: asymmetric, nearest rounds down enlarging, up shrinking --

def legacy_nearest(x, scales):
    """Upsample and Resize-10's nearest, as ONNX Runtime computes it."""
    for axis, scale in enumerate(scales):
        out = int(np.floor(x.shape[axis] * scale))
        source = np.arange(out) / scale
        index = np.floor(source) if scale >= 1 else np.ceil(source)
        x = np.take(x, np.minimum(index.astype(np.int64), x.shape[axis] - 1), axis=axis)
    return x


def legacy_linear(x, scales):
    for axis, scale in enumerate(scales):
        n = x.shape[axis]
        source = np.arange(int(np.floor(n * scale))) / scale
        low = np.minimum(np.floor(source).astype(np.int64), n - 1)
        high = np.minimum(low + 1, n - 1)
        shape = [-1 if a == axis else 1 for a in range(x.ndim)]
        ratio = (source - np.floor(source)).reshape(shape)
        x = np.take(x, low, axis=axis) * (1 - ratio) + np.take(x, high, axis=axis) * ratio
    return x


def test_upsample_7_and_9_and_resize_10(tmp_path):
    x = random(1, 2, 3, 4)
    close(run(tmp_path, "Upsample", 7, {"x": x}, scales=[1.0, 1.0, 2.0, 3.0]),
          np.repeat(np.repeat(x, 2, axis=2), 3, axis=3))
    scales = np.array([1, 1, 2.5, 1.5], np.float32)
    close(run(tmp_path, "Upsample", 9, {"x": x}, inits=[("s", scales)], mode="linear"), legacy_linear(x, scales))
    close(run(tmp_path, "Upsample", 8, {"x": x}, scales=[1.0, 1.0, 2.5, 1.5]), legacy_nearest(x, scales))
    shrink = np.array([1, 1, 0.6, 0.75], np.float32)
    tall = random(1, 2, 5, 4)
    got = run(tmp_path, "Resize", 10, {"x": tall}, inits=[("s", shrink)])
    close(got, tall[:, :, [0, 2, 4]][:, :, :, [0, 2, 3]])  # the ceilings of 0, 1.67, 3.33 and 0, 1.33, 2.67
    close(got, legacy_nearest(tall, shrink))
    close(run(tmp_path, "Resize", 10, {"x": x}, inits=[("s", scales)], mode="linear"), legacy_linear(x, scales))
    assert "scales must be at least 1" in refusal(tmp_path, "Upsample", 9, {"x": x}, inits=[("s", shrink)])
    assert "attribute 'coordinate_transformation_mode' is not supported (Resize-10" in refusal(
        tmp_path, "Resize", 10, {"x": x}, inits=[("s", scales)], coordinate_transformation_mode="half_pixel")


def test_upsample_at_opset_10_is_refused_as_deprecated(tmp_path):
    x = random(1, 1, 2, 2)
    text = refusal(tmp_path, "Upsample", 10, {"x": x}, inits=[("s", np.array([1, 1, 2, 2], np.float32))])
    assert "node 'node' (Upsample): Upsample-10 (opset 10) is deprecated: ONNX replaced it by Resize" in text, text
    text = refusal(tmp_path, "Upsample", 13, {"x": x}, inits=[("s", np.array([1, 1, 2, 2], np.float32))])
    assert "Upsample-10 (opset 13) is deprecated" in text, text


# ---- Resize-18 and 19 -----------------------------------------------------------

def resize_1d(x, axis, out, scale, coordinates, mode):
    """One axis of Resize by the specification's formulas (nearest:
    round_prefer_floor)."""
    n = x.shape[axis]
    j = np.arange(out, dtype=np.float64)
    if coordinates == "half_pixel_symmetric":
        source = n / 2 * (1 - out / (scale * n)) + (j + 0.5) / scale - 0.5
    else:  # half_pixel
        source = (j + 0.5) / scale - 0.5
    base = np.floor(source)
    ratio = source - base
    low = np.clip(base.astype(np.int64), 0, n - 1)
    high = np.clip(base.astype(np.int64) + 1, 0, n - 1)
    if mode == "nearest":
        return np.take(x, np.where(ratio > 0.5, high, low), axis=axis)
    shape = [-1 if a == axis else 1 for a in range(x.ndim)]
    ratio = ratio.reshape(shape).astype(x.dtype)
    return np.take(x, low, axis=axis) * (1 - ratio) + np.take(x, high, axis=axis) * ratio


def test_resize_18_axes_and_keep_aspect_ratio_policy(tmp_path):
    x = random(1, 2, 3, 5)
    sizes = i64([8, 8])  # for axes (2, 3): ratios 8/3 and 8/5
    for policy, scale, shape in [("not_larger", 1.6, (1, 2, 5, 8)), ("not_smaller", 8 / 3, (1, 2, 8, 13))]:
        got = run(tmp_path, "Resize", 18, {"x": x}, inits=[("sizes", sizes)], inputs=["x", "", "", "sizes"],
                  axes=[2, 3], keep_aspect_ratio_policy=policy, mode="linear")
        want = resize_1d(resize_1d(x, 2, shape[2], scale, "half_pixel", "linear"), 3, shape[3], scale, "half_pixel",
                         "linear")
        assert got.shape == shape
        close(got, want)
    got = run(tmp_path, "Resize", 18, {"x": x}, inits=[("scales", np.array([2.0], np.float32))],
              inputs=["x", "", "scales"], axes=[-1])
    close(got, resize_1d(x, 3, 10, 2.0, "half_pixel", "nearest"))
    # antialias has no effect on nearest or when enlarging, and is refused when a linear resize shrinks.
    close(run(tmp_path, "Resize", 18, {"x": x}, inits=[("scales", np.array([1, 1, 2, 2], np.float32))],
              inputs=["x", "", "scales"], antialias=1, mode="linear"),
          resize_1d(resize_1d(x, 2, 6, 2.0, "half_pixel", "linear"), 3, 10, 2.0, "half_pixel", "linear"))
    text = refusal(tmp_path, "Resize", 18, {"x": x}, inits=[("scales", np.array([1, 1, 0.5, 1], np.float32))],
                   inputs=["x", "", "scales"], antialias=1, mode="linear")
    assert "node 'node' (Resize): antialias=1 with mode 'linear' when shrinking (axis 2) is not supported" in text
    text = refusal(tmp_path, "Resize", 18, {"x": x}, inits=[("sizes", sizes)], inputs=["x", "", "", "sizes"],
                   axes=[2, 3], keep_aspect_ratio_policy="fit")
    assert "keep_aspect_ratio_policy 'fit' is not one of stretch, not_larger, not_smaller" in text
    assert "attribute 'axes' is not supported (Resize-13, the version in opset 17)" in refusal(
        tmp_path, "Resize", 17, {"x": x}, inits=[("sizes", i64([1, 2, 8, 8]))], inputs=["x", "", "", "sizes"],
        axes=[2, 3])


def test_resize_19_half_pixel_symmetric(tmp_path):
    x = np.array([[[[1, 2, 3, 4]]]], np.float32)
    got = run(tmp_path, "Resize", 19, {"x": x}, inits=[("scales", np.array([1, 1, 1, 0.6], np.float32))],
              inputs=["x", "", "scales"], mode="linear", coordinate_transformation_mode="half_pixel_symmetric")
    close(got, np.array([[[[5 / 3, 10 / 3]]]], np.float32))  # sources 2/3 and 7/3, by hand
    x = random(1, 1, 3, 7)
    got = run(tmp_path, "Resize", 21, {"x": x}, inits=[("scales", np.array([1, 1, 2.3, 0.7], np.float32))],
              inputs=["x", "", "scales"], mode="linear", coordinate_transformation_mode="half_pixel_symmetric")
    want = resize_1d(resize_1d(x, 2, 6, np.float32(2.3), "half_pixel_symmetric", "linear"), 3, 4, np.float32(0.7),
                     "half_pixel_symmetric", "linear")
    close(got, want)
    assert "'half_pixel_symmetric' is not one of" in refusal(
        tmp_path, "Resize", 18, {"x": x}, inits=[("scales", np.array([1, 1, 2, 2], np.float32))],
        inputs=["x", "", "scales"], coordinate_transformation_mode="half_pixel_symmetric")


# ---- BatchNormalization, Dropout, pools, and other attribute differences -------------

def test_batch_normalization_7_spatial_and_later(tmp_path):
    x = random(2, 3, 4, 5)
    scale, bias, mean = random(3), random(3), random(3)
    var = np.abs(random(3)) + 0.5
    inits = [("s", scale), ("b", bias), ("m", mean), ("v", var)]
    c = lambda a: a.reshape(1, 3, 1, 1)
    want = (x - c(mean)) / np.sqrt(c(var) + 1e-5) * c(scale) + c(bias)
    for opset, attrs in [(7, {"spatial": 1}), (7, {}), (9, {"momentum": 0.8}), (14, {"training_mode": 0}), (15, {})]:
        close(run(tmp_path, "BatchNormalization", opset, {"x": x}, inits, **attrs), want)
    per_element = [(n, np.abs(random(3, 4, 5)) + 0.5) for n in ("s", "b", "m", "v")]
    s, b, m, v = (a for _, a in per_element)
    close(run(tmp_path, "BatchNormalization", 7, {"x": x}, per_element, spatial=0),
          (x - m) / np.sqrt(v + 1e-5) * s + b)
    assert "attribute 'spatial' is not supported (BatchNormalization-9" in refusal(
        tmp_path, "BatchNormalization", 9, {"x": x}, inits, spatial=1)


def test_dropout_ratio_attribute_and_mask_type(tmp_path):
    x = random(2, 3)
    y, mask = run(tmp_path, "Dropout", 7, {"x": x}, outputs=("y", "mask"), ratio=0.3)
    close(y, x)
    assert mask.dtype == np.float32 and (mask == 1).all()  # Dropout-7's mask has the input's type
    y, mask = run(tmp_path, "Dropout", 10, {"x": x}, outputs=("y", "mask"), ratio=0.3)
    assert mask.dtype == np.bool_ and mask.all()
    close(run(tmp_path, "Dropout", 12, {"x": x}, inits=[("r", np.array(0.3, np.float32))]), x)
    assert "attribute 'ratio' is not supported (Dropout-12" in refusal(tmp_path, "Dropout", 12, {"x": x}, ratio=0.3)


def test_dropout_in_training_mode_with_a_ratio_of_zero_is_the_identity(tmp_path):
    # torchvision's Swin-T exports its attention dropout so: nothing dropped.
    x = random(2, 3)
    zero, training = ("r", np.array(0.0, np.float32)), ("t", np.array(True))
    y, mask = run(tmp_path, "Dropout", 13, {"x": x}, [zero, training], inputs=["x", "r", "t"], outputs=("y", "mask"))
    close(y, x)
    assert mask.dtype == np.bool_ and mask.all()
    assert "training_mode=true is not supported (inference only) unless the ratio is a known 0" in refusal(
        tmp_path, "Dropout", 13, {"x": x}, [("r", np.array(0.1, np.float32)), training], inputs=["x", "r", "t"])


def test_pool_attributes_by_version(tmp_path):
    x = random(1, 2, 5, 5)
    # MaxPool-1 (opsets 7) has no ceil_mode, dilations or storage_order; MaxPool-10 has them.
    for attr, value in [("ceil_mode", 1), ("dilations", [1, 1]), ("storage_order", 0)]:
        assert f"attribute '{attr}' is not supported (MaxPool-1, the version in opset 7)" in refusal(
            tmp_path, "MaxPool", 7, {"x": x}, kernel_shape=[2, 2], **{attr: value})
    assert "attribute 'ceil_mode' is not supported (MaxPool-8" in refusal(
        tmp_path, "MaxPool", 9, {"x": x}, kernel_shape=[2, 2], ceil_mode=1)
    got = run(tmp_path, "MaxPool", 10, {"x": x}, kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
    want = np.full((1, 2, 3, 3), -np.inf, np.float32)
    for i in range(3):
        for j in range(3):
            want[:, :, i, j] = x[:, :, 2 * i:2 * i + 2, 2 * j:2 * j + 2].max(axis=(2, 3))
    close(got, want)
    close(run(tmp_path, "MaxPool", 8, {"x": x}, kernel_shape=[2, 2], strides=[2, 2], storage_order=0),
          want[:, :, :2, :2])
    # AveragePool-7: count_include_pad; ceil_mode only from 10.
    got = run(tmp_path, "AveragePool", 7, {"x": x}, kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1)
    padded = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)])
    close(got, np.array([[[[padded[0, c, i:i + 3, j:j + 3].mean() for j in range(5)] for i in range(5)]
                          for c in range(2)]], np.float32))
    assert "attribute 'ceil_mode' is not supported (AveragePool-7" in refusal(
        tmp_path, "AveragePool", 9, {"x": x}, kernel_shape=[2, 2], ceil_mode=1)


def test_other_version_differences(tmp_path):
    x = random(2, 8, 2, 3)
    # DepthToSpace-1 is DCR only; mode came with 11.
    close(run(tmp_path, "DepthToSpace", 10, {"x": x}, blocksize=2),
          run(tmp_path, "DepthToSpace", 11, {"x": x}, blocksize=2, mode="DCR"))
    assert "attribute 'mode' is not supported (DepthToSpace-1" in refusal(
        tmp_path, "DepthToSpace", 10, {"x": x}, blocksize=2, mode="CRD")
    # OneHot-9 turns negative indices off; from 11 they count from depth.
    indices = i64([0, -1, 2])
    inits = [("depth", i64([3])), ("values", np.array([0, 1], np.float32))]
    close(run(tmp_path, "OneHot", 9, {"i": indices}, inits), np.array([[1, 0, 0], [0, 0, 0], [0, 0, 1]], np.float32))
    close(run(tmp_path, "OneHot", 11, {"i": indices}, inits), np.array([[1, 0, 0], [0, 0, 1], [0, 0, 1]], np.float32))
    # ArgMax's select_last_index (12), Shape's start (15), Reshape's allowzero (14), Cast's saturate (19).
    ties = np.array([[1, 3, 3]], np.float32)
    assert run(tmp_path, "ArgMax", 12, {"x": ties}, axis=1, select_last_index=1).tolist() == [[2]]
    assert "attribute 'select_last_index' is not supported (ArgMax-11" in refusal(
        tmp_path, "ArgMax", 11, {"x": ties}, axis=1, select_last_index=1)
    assert run(tmp_path, "Shape", 15, {"x": x}, start=1, end=-1).tolist() == [8, 2]
    assert "attribute 'start' is not supported (Shape-13" in refusal(tmp_path, "Shape", 14, {"x": x}, start=1)
    assert "attribute 'allowzero' is not supported (Reshape-13" in refusal(
        tmp_path, "Reshape", 13, {"x": x}, inits=[("s", i64([2, -1]))], allowzero=0)
    assert run(tmp_path, "Cast", 9, {"x": x}, to=TensorProto.INT32).dtype == np.int32
    assert run(tmp_path, "Cast", 19, {"x": x}, to=TensorProto.FLOAT16, saturate=1).dtype == np.float16
    assert "attribute 'saturate' is not supported (Cast-13" in refusal(
        tmp_path, "Cast", 13, {"x": x}, to=TensorProto.INT32, saturate=1)
    # Constant's value_float came with 12.
    assert "attribute 'value' is required" in refusal(tmp_path, "Constant", 11, {}, value_float=1.0)


# ---- Functions added through opset 21 ------------------------------------------

def group_norm(x, scale, bias, groups, epsilon, per_channel):
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1)
    normalized = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + epsilon)
    if not per_channel:
        return (normalized * scale.reshape(groups, 1) + bias.reshape(groups, 1)).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return normalized.reshape(x.shape) * scale.reshape(shape) + bias.reshape(shape)


def test_group_normalization_18_per_group_and_21_per_channel(tmp_path):
    x = random(2, 6, 3, 4)
    scale, bias = random(3), random(3)
    close(run(tmp_path, "GroupNormalization", 18, {"x": x}, [("s", scale), ("b", bias)], num_groups=3, epsilon=1e-3),
          group_norm(x, scale, bias, 3, 1e-3, False))
    scale, bias = random(6), random(6)
    close(run(tmp_path, "GroupNormalization", 21, {"x": x}, [("s", scale), ("b", bias)], num_groups=2),
          group_norm(x, scale, bias, 2, 1e-5, True))
    text = refusal(tmp_path, "GroupNormalization", 18, {"x": x}, [("s", scale), ("b", bias)], num_groups=3)
    assert "scale must have shape (3), got (6)" in text
    assert "num_groups 4 does not divide the 6 channels" in refusal(
        tmp_path, "GroupNormalization", 21, {"x": x}, [("s", scale), ("b", bias)], num_groups=4)
    text = refusal(tmp_path, "GroupNormalization", 17, {"x": x}, [("s", scale), ("b", bias)], num_groups=2)
    assert "node 'node' (GroupNormalization): GroupNormalization is not in opset 17 (ONNX added it in opset 18)" in text


def test_layer_normalization_gelu_and_mish(tmp_path):
    x = random(2, 3, 8)
    gamma, beta = random(8), random(8)
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    close(run(tmp_path, "LayerNormalization", 17, {"x": x}, [("g", gamma), ("b", beta)]),
          (x - mean) / np.sqrt(var + 1e-5) * gamma + beta)
    from math import erf, pi, sqrt
    erf_all = np.vectorize(erf)
    close(run(tmp_path, "Gelu", 20, {"x": x}), 0.5 * x * (1 + erf_all(x / sqrt(2))))
    close(run(tmp_path, "Gelu", 21, {"x": x}, approximate="tanh"),
          0.5 * x * (1 + np.tanh(sqrt(2 / pi) * (x + 0.044715 * x ** 3))))
    close(run(tmp_path, "Mish", 18, {"x": x * 10}), x * 10 * np.tanh(np.log1p(np.exp(x * 10))))
    assert "Gelu is not in opset 17 (ONNX added it in opset 20)" in refusal(tmp_path, "Gelu", 17, {"x": x})
    # ONNX Runtime's LayerNormalization of the default domain, before opset 17.
    close(run(tmp_path, "LayerNormalization", 13, {"x": x}, [("g", gamma), ("b", beta)], epsilon=1e-3),
          (x - mean) / np.sqrt(var + 1e-3) * gamma + beta)
    assert "attribute 'flavour' is not supported (LayerNormalization at opset 11, before ONNX added it in opset 17)" in \
        refusal(tmp_path, "LayerNormalization", 11, {"x": x}, [("g", gamma)], flavour=1)


def test_center_crop_pad(tmp_path):
    x = random(3, 5, 4)
    # Axis 1: 5 -> 2, dropping floor(3 / 2) = 1 before; axis 2: 4 -> 7, adding floor(3 / 2) = 1 before.
    got = run(tmp_path, "CenterCropPad", 18, {"x": x}, inits=[("shape", i64([2, 7]))], axes=[1, -1])
    close(got, np.pad(x[:, 1:3], [(0, 0), (0, 0), (1, 2)]))
    got = run(tmp_path, "CenterCropPad", 21, {"x": x}, inits=[("shape", i64([3, 4, 4]))])
    close(got, x[:, 0:4])
    assert "CenterCropPad is not in opset 17 (ONNX added it in opset 18)" in refusal(
        tmp_path, "CenterCropPad", 17, {"x": x}, inits=[("shape", i64([3, 4, 4]))])


def affine_grid(theta, size, align_corners):
    """ONNX AffineGrid by its definition: normalized coordinates times theta."""
    def axis(n):
        if n == 1:
            return np.array([-1.0 if align_corners else 0.0])
        ends = np.linspace(-1, 1, n)
        return ends if align_corners else ends * (n - 1) / n
    spatial = size[2:]
    axes = np.meshgrid(*[axis(n) for n in spatial], indexing="ij")  # (D,) H, W
    base = np.stack([a.ravel() for a in reversed(axes)] + [np.ones(int(np.prod(spatial)))], axis=-1)
    return np.einsum("pk,nck->npc", base, theta).reshape((size[0], *spatial, len(spatial))).astype(np.float32)


@pytest.mark.parametrize("align_corners", [0, 1])
def test_affine_grid(tmp_path, align_corners):
    theta = random(2, 2, 3)
    size = [2, 3, 4, 5]
    close(run(tmp_path, "AffineGrid", 20, {"theta": theta}, inits=[("size", i64(size))], align_corners=align_corners),
          affine_grid(theta, size, align_corners))
    theta = random(1, 3, 4)
    size = [1, 1, 2, 1, 3]
    close(run(tmp_path, "AffineGrid", 21, {"theta": theta}, inits=[("size", i64(size))], align_corners=align_corners),
          affine_grid(theta, size, align_corners))
    assert "theta must have shape (2, 2, 3), got (1, 3, 4)" in refusal(
        tmp_path, "AffineGrid", 20, {"theta": theta}, inits=[("size", i64([2, 3, 4, 5]))])


def test_an_input_the_version_lacks_is_refused_not_ignored(tmp_path):
    """ReduceMean-13 takes its axes as an attribute; an axes input there
    (ReduceMean-18's) must not be dropped, which would reduce every axis."""
    x = random(2, 3, 4)
    cases = [("ReduceMean", 13, [("axes", i64([1]))]), ("Squeeze", 11, [("axes", i64([0]))]),
             ("Clip", 10, [("lo", np.array(0, np.float32))]), ("Dropout", 7, [("r", np.array(0.5, np.float32))]),
             ("Slice", 9, [("s", i64([0])), ("e", i64([1]))]), ("Split", 12, [("s", i64([1, 1]))])]
    for op, opset, inits in cases:
        outputs = ("a", "b") if op == "Split" else ("y",)
        text = refusal(tmp_path, op, opset, {"x": x}, inits, outputs=outputs, **({"starts": [0], "ends": [1]} if op == "Slice" else {}))
        name = inits[0][0]
        assert f"node 'node' ({op}): input 1 ('{name}') is not supported ({op}-" in text, text
    # Inputs a converter does not need are still read: Resize's roi, Dropout-12's ratio.
    close(run(tmp_path, "Dropout", 12, {"x": x}, [("r", np.array(0.5, np.float32))]), x)
    got = run(tmp_path, "Resize", 13, {"x": x}, [("roi", np.array([], np.float32)), ("scales", np.array([1, 1, 2], np.float32))])
    assert got.shape == (2, 3, 8)


# ---- The table itself, and the CLI ----------------------------------------------

def test_versions_match_onnx_schemas():
    """Each operator's versions through opset 17 are those of ONNX 1.12's
    schemas; the ones ONNX 1.12 does not know came after opset 17."""
    import onnx.defs
    history = {}
    for schema in onnx.defs.get_all_schemas_with_history():
        if schema.domain == "":
            history.setdefault(schema.name, set()).add(schema.since_version)
    table = sy.frontend.onnx_operators()
    assert sy.frontend.ONNX_OPSETS == (1, 21)
    for op, versions in table.items():
        if op in history:
            assert [v for v in versions if v <= 17] == sorted(history[op]), op
        else:
            assert min(versions) > 17, op
    assert table["Upsample"][9] is None and "deprecated" in table["Upsample"][10]


def test_cli_refuses_a_deprecated_version_with_exit_1_and_writes_nothing(tmp_path):
    path = save_node(tmp_path / "up.onnx", "Upsample", 11, {"x": random(1, 1, 2, 2)},
                     [("s", np.array([1, 1, 2, 2], np.float32))])
    result = subprocess.run([str(SWITCHYARD), "compile", str(path), "-o", str(tmp_path / "never")],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert "node 'node' (Upsample): Upsample-10 (opset 11) is deprecated" in result.stderr, result.stderr
    assert not (tmp_path / "never").exists()


def test_old_opset_model_compiles_and_matches_the_interpreter(tmp_path):
    """A model of opset 8 operators (Upsample, Slice and Squeeze with
    attributes, Softmax on a 2-D view) through the backend."""
    x = random(1, 2, 3, 4)
    nodes = [helper.make_node("Upsample", ["x"], ["up"], name="up", scales=[1.0, 1.0, 2.0, 2.0]),
             helper.make_node("Slice", ["up"], ["cut"], name="cut", starts=[1], ends=[5], axes=[2]),
             helper.make_node("Unsqueeze", ["cut"], ["u"], name="u", axes=[0]),
             helper.make_node("Squeeze", ["u"], ["s"], name="s", axes=[0]),
             helper.make_node("Softmax", ["s"], ["y"], name="softmax", axis=2)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)]), str(tmp_path / "m.onnx"))
    mod = sy.frontend.from_onnx(tmp_path / "m.onnx")
    up = np.repeat(np.repeat(x, 2, axis=2), 2, axis=3)[:, :, 1:5]
    want = coerced_2d(softmax, up, 2)
    close(sy.evaluate(mod, x=x), want)
    sy.build(mod, ["cpu:0"], tmp_path / "artifact")
    got = sy.runtime.load(tmp_path / "artifact").run(x=x)
    close(got[0] if isinstance(got, (list, tuple)) else got, want)


@pytest.mark.parametrize("opset", [1, 6])
def test_opsets_below_7_import_the_versions_opset_7_selects(tmp_path, opset):
    """Softplus-1, Softsign-1 and GlobalAveragePool-1 (and at 6, Elu-6 and
    HardSigmoid-6) are the versions opset 7 selects too: compiled, they
    match NumPy."""
    x = random(2, 3, 4, 5)
    nodes = [helper.make_node("Softsign", ["x"], ["a"], name="softsign"),
             helper.make_node("Softplus", ["a"], ["b"], name="softplus")]
    want = np.log1p(np.exp(x / (1 + np.abs(x))))
    if opset == 6:
        nodes += [helper.make_node("Elu", ["b"], ["c"], name="elu", alpha=0.5),
                  helper.make_node("HardSigmoid", ["c"], ["d"], name="hard", alpha=0.3, beta=0.4)]
        want = np.clip(0.3 * want + 0.4, 0, 1)  # Elu is the identity on positive softplus
    nodes.append(helper.make_node("GlobalAveragePool", [nodes[-1].output[0]], ["y"], name="pool"))
    want = want.mean(axis=(2, 3), keepdims=True)
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), str(tmp_path / "m.onnx"))
    mod = sy.frontend.from_onnx(tmp_path / "m.onnx")
    close(sy.evaluate(mod, x=x), want)
    sy.build(mod, ["cpu:0"], tmp_path / "artifact")
    got = sy.runtime.load(tmp_path / "artifact").run(x=x)
    close(got[0] if isinstance(got, (list, tuple)) else got, want)
