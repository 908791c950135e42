"""QDQ convolutions and products fused into int8 operators (FuseQDQ,
qnn.conv2d, qnn.dense) and run as oneDNN int8 primitives. Each case: the
imported model's interpreter (the float32 QDQ arithmetic, ONNX's formula),
the fused module's interpreter (oneDNN's formula: the int8 operators'
reference kernels) and the compiled artifact, against an exact integer
reference in NumPy. Every result is within one quantum of the exact one;
the imported model's is exact but where the real value lies within
float32's rounding of a half, the fused ones off by one on under 1% of the
elements (oneDNN adds the output zero point before rounding halves to
even; the bias and scales are folded in float32); the compiled artifact
must equal the fused module's interpreter. What the int8 kernel cannot
compute (non-zero weight zero points) stays on the float path."""
import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import switchyard as sy
from switchyard import transform as T

import test_onnx_qdq as qdq

RANGES = qdq.RANGES


def fused_module(path):
    """The imported model through the default pipeline's passes up to FuseQDQ."""
    mod = sy.frontend.from_onnx(path)
    return T.Sequential([T.InferType(), T.PlanDevices(devices=["cpu:0"]), T.SimplifyExpr(), T.FuseQDQ()])(mod)


def int8_primitives(artifact):
    manifest = json.loads((pathlib.Path(artifact) / "manifest.json").read_text())
    return [p["quantization"] for p in manifest["primitives"] if "quantization" in p]


def run_case(tmp_path, case, g, accumulator, relu, fuses=True):
    path = g.save(tmp_path / "model.onnx", case.x, ("y",))
    imported = sy.evaluate(sy.frontend.from_onnx(path), x=case.x)
    mod = fused_module(path)
    assert ("qnn." in str(mod)) == fuses
    fused = sy.evaluate(mod, x=case.x)
    sy.build(sy.frontend.from_onnx(path), ["cpu:0"], tmp_path / "artifact")
    compiled = sy.runtime.load(tmp_path / "artifact").run(x=case.x)
    compiled = compiled[0] if isinstance(compiled, (list, tuple)) else compiled
    assert len(int8_primitives(tmp_path / "artifact")) == (1 if fuses else 0)
    want, near_half = case.requantize(accumulator, relu)
    for got in (imported, fused, compiled):
        assert got.dtype == case.y_dtype
        assert np.abs(got.astype(np.int64) - want).max() <= 1
    np.testing.assert_array_equal(imported[~near_half], want[~near_half])
    # oneDNN adds the zero point before rounding: a half lands one quantum
    # off only where it is odd; elsewhere within float32's rounding.
    off = fused.astype(np.int64) != want
    assert off.mean() < 0.01
    np.testing.assert_array_equal(compiled, fused)
    low, high = RANGES[case.y_dtype]
    interior = (want > low) & (want < high)
    assert interior.any() and not interior.all()


@pytest.mark.parametrize("x_dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("per_channel", [True, False])
@pytest.mark.parametrize("relu", [False, True])
def test_fused_conv(tmp_path, x_dtype, per_channel, relu):
    case = qdq.Case(x_dtype, (8, 6, 3, 3), (2, 6, 9, 9), 0, per_channel, y_dtype=np.uint8 if relu else np.int8)
    g = case.graph("Conv", relu, pads=[1, 1, 1, 1], strides=[2, 2])
    run_case(tmp_path, case, g, qdq.conv_accumulator(case, (1, 1, 1, 1), (2, 2)), relu)


@pytest.mark.parametrize("x_dtype", [np.uint8, np.int8])
def test_fused_conv_odd_channels(tmp_path, x_dtype):
    case = qdq.Case(x_dtype, (7, 5, 3, 3), (1, 5, 11, 13), 0, True)
    g = case.graph("Conv", True, pads=[1, 0, 1, 2])
    run_case(tmp_path, case, g, qdq.conv_accumulator(case, (1, 0, 1, 2), (1, 1)), True)


def test_fused_grouped_conv_pads_with_the_zero_point(tmp_path):
    case = qdq.Case(np.uint8, (8, 3, 3, 3), (1, 6, 7, 8), 0, True)
    case.x[:] = case.x_zero
    case.x[0, :, :2, :2] = 255
    g = case.graph("Conv", pads=[2, 1, 0, 1], strides=[1, 2], group=2)
    run_case(tmp_path, case, g, qdq.conv_accumulator(case, (2, 1, 0, 1), (1, 2), 2), False)


@pytest.mark.parametrize("x_dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("per_channel", [True, False])
def test_fused_matmul(tmp_path, x_dtype, per_channel):
    case = qdq.Case(x_dtype, (40, 13), (5, 40), 1, per_channel)
    case.bias[:] = 0  # MatMul has no bias
    g = case.graph("MatMul")
    accumulator = (case.x.astype(np.int64) - int(case.x_zero)) @ case.w.astype(np.int64)
    run_case(tmp_path, case, g, accumulator, False)


@pytest.mark.parametrize("trans_b", [0, 1])
def test_fused_gemm_with_relu(tmp_path, trans_b):
    case = qdq.Case(np.uint8, (13, 40) if trans_b else (40, 13), (5, 40), 0 if trans_b else 1, True)
    g = case.graph("Gemm", relu=True, transB=trans_b)
    w = case.w.astype(np.int64)
    accumulator = (case.x.astype(np.int64) - int(case.x_zero)) @ (w.T if trans_b else w) + case.bias
    run_case(tmp_path, case, g, accumulator, True)


def test_weight_zero_point_keeps_the_float_path(tmp_path):
    case = qdq.Case(np.uint8, (8, 6, 3, 3), (1, 6, 8, 8), 0, True, w_zero=5)
    g = case.graph("Conv", pads=[1, 1, 1, 1])
    run_case(tmp_path, case, g, qdq.conv_accumulator(case, (1, 1, 1, 1), (1, 1)), False, fuses=False)


def quantized_chain(tmp_path, residual):
    """conv0 (1x1) -> relu -> conv1 (3x3) -> relu -> conv2 (1x1) [+ relu0's result, or with residual="conv"
    + a 1x1 convolution of it (a ResNet downsample)] -> relu -> conv3 (1x1), quantized as
    tests/models/qdq_model.py quantizes a real network; conv3's result, the model's float output, stays a
    float convolution. Returns the QDQ model's path and its float model."""
    import sys
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "models"))
    import qdq_model

    rng = np.random.default_rng(5)
    weights = {"w0": (24, 16, 1, 1), "w1": (24, 24, 3, 3), "w2": (24, 24, 1, 1), "w3": (8, 24, 1, 1)}
    if residual == "conv":
        weights["w4"] = (24, 24, 1, 1)
    initializers = [numpy_helper.from_array((rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:])))
                                            .astype(np.float32), name) for name, shape in weights.items()]
    initializers += [numpy_helper.from_array(rng.standard_normal(shape[0]).astype(np.float32) * 0.1, "b" + name[1])
                     for name, shape in weights.items()]
    nodes = [helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], name="conv0"),
             helper.make_node("Relu", ["c0"], ["r0"], name="relu0"),
             helper.make_node("Conv", ["r0", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2")]
    if residual == "conv":
        nodes += [helper.make_node("Conv", ["r0", "w4", "b4"], ["c4"], name="conv4"),
                  helper.make_node("Add", ["c2", "c4"], ["s2"], name="add2"),
                  helper.make_node("Relu", ["s2"], ["r2"], name="relu2")]
    elif residual:
        nodes += [helper.make_node("Add", ["c2", "r0"], ["s2"], name="add2"),
                  helper.make_node("Relu", ["s2"], ["r2"], name="relu2")]
    else:
        nodes += [helper.make_node("Relu", ["c2"], ["r2"], name="relu2")]
    nodes += [helper.make_node("Conv", ["r2", "w3", "b3"], ["y"], name="conv3")]
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 12, 12])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 12, 12])], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    build = pathlib.Path(os.environ.get("SY_BUILD_DIR", "build"))
    names = qdq_model.quantized_tensors(model.graph)
    ranges = qdq_model.activation_ranges(model, names, qdq_model.calibration_inputs(model, 2), build)
    path = tmp_path / ("residual_qdq.onnx" if residual else "chain_qdq.onnx")
    onnx.save(qdq_model.make_qdq(model, ranges), str(path))
    return path, qdq_model.calibration_inputs(model, 1, seed=9)[0]


def int8_convolution_formats(artifact):
    manifest = json.loads((pathlib.Path(artifact) / "manifest.json").read_text())
    return [(p["src"].get("format", ""), p["dst"].get("format", "")) for p in manifest["primitives"]
            if "quantization" in p and p["kind"] == "convolution"]


@pytest.mark.parametrize("residual", [False, True])
def test_values_between_int8_convolutions_stay_channels_last(tmp_path, residual):
    # The values passed between int8 convolutions, and through the loops
    # after them (a residual block's dequantize, add, relu, quantize), stay
    # channels last: no reorder to dense and back around each call. What
    # only a dense loop reads (the quantized model input) stays dense; the
    # artifact computes what the fused module's interpreter does.
    path, x = quantized_chain(tmp_path, residual)
    sy.build(sy.frontend.from_onnx(path), ["cpu:0"], tmp_path / "artifact")
    formats = int8_convolution_formats(tmp_path / "artifact")
    if residual:
        # conv2 adds the dequantized relu0 result in a loop after its
        # primitive (a loop dequantizes it from conv0's int8 result), and
        # requantizes and dequantizes the sum for the float conv3.
        assert formats == [("", "nhwc"), ("nhwc", "nhwc"), ("nhwc", "nhwc")], formats
    else:
        # conv0 and conv1 run alone; conv2's loop dequantizes its result for the float conv3.
        assert formats == [("", "nhwc"), ("nhwc", "nhwc"), ("nhwc", "nhwc")], formats
    # The input's quantize loop, conv0, conv1, conv2 with its epilogue loop
    # (which dequantizes relu0's int8 result itself where it adds it, rather
    # than a kernel of its own writing it out in float32), conv3.
    manifest = json.loads((tmp_path / "artifact" / "manifest.json").read_text())
    assert len(manifest["kernels"]) == 5, [k["name"] for k in manifest["kernels"]]
    compiled = sy.runtime.load(tmp_path / "artifact").run(x=x)
    # The int8 stages are exact; conv3 is float32, where oneDNN's sums round
    # otherwise (a value off by one quantum would be off by ~1e-3 here).
    np.testing.assert_allclose(compiled, sy.evaluate(fused_module(path), x=x), rtol=1e-5, atol=1e-5)


def test_a_residual_joins_convolution_writes_8bit_values_for_the_join_to_dequantize(tmp_path):
    # conv2's result plus conv4's (a ResNet downsample): conv2's epilogue
    # loop takes the join and dequantizes conv4's 8-bit result itself, so
    # conv4 runs as its primitive alone, writing uint8, not a loop writing
    # its dequantized float32 values (4x the bytes) for the join to read.
    path, x = quantized_chain(tmp_path, "conv")
    sy.build(sy.frontend.from_onnx(path), ["cpu:0"], tmp_path / "artifact")
    manifest = json.loads((tmp_path / "artifact" / "manifest.json").read_text())
    kernels = {k["span"]: k for k in manifest["kernels"]}
    downsample = [k for span, k in kernels.items() if span.startswith("c4_")]
    assert [(k["kind"], k["operators"]) for k in downsample] == [("dnnl", "qnn.conv2d")], list(kernels)
    join = [span for span in kernels if "add2" in span and "c4_dequantized" in span]
    assert len(join) == 1, list(kernels)
    compiled = sy.runtime.load(tmp_path / "artifact").run(x=x)
    np.testing.assert_allclose(compiled, sy.evaluate(fused_module(path), x=x), rtol=1e-5, atol=1e-5)


def test_inspect_names_the_int8_primitive(tmp_path):
    case = qdq.Case(np.uint8, (8, 6, 3, 3), (1, 6, 8, 8), 0, True)
    path = case.graph("Conv", True, pads=[1, 1, 1, 1]).save(tmp_path / "model.onnx", case.x, ("y",))
    sy.build(sy.frontend.from_onnx(path), ["cpu:0"], tmp_path / "artifact")
    cli = pathlib.Path(os.environ.get("SY_BUILD_DIR", "build")) / "bin" / "switchyard"
    text = subprocess.run([str(cli), "inspect", str(tmp_path / "artifact"), "--implementations"], check=True,
                          capture_output=True, text=True).stdout
    assert "int8 u8s8u8" in text, text


def pooled_chain(tmp_path, ceil_mode):
    """conv0 (3x3) -> relu -> MaxPool 3x3 stride 2 (ResNet's stem pool) -> conv1 (1x1) -> relu -> conv2 (1x1),
    quantized as tests/models/qdq_model.py quantizes a real network. Returns the QDQ model's path and an input."""
    import sys
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "models"))
    import qdq_model

    rng = np.random.default_rng(7)
    weights = {"w0": (16, 8, 3, 3), "w1": (24, 16, 1, 1), "w2": (8, 24, 1, 1)}
    initializers = [numpy_helper.from_array((rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:])))
                                            .astype(np.float32), name) for name, shape in weights.items()]
    initializers += [numpy_helper.from_array(rng.standard_normal(shape[0]).astype(np.float32) * 0.1, "b" + name[1])
                     for name, shape in weights.items()]
    nodes = [helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], name="conv0", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c0"], ["r0"], name="relu0"),
             helper.make_node("MaxPool", ["r0"], ["p0"], name="pool", kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1], ceil_mode=int(ceil_mode)),
             helper.make_node("Conv", ["p0", "w1", "b1"], ["c1"], name="conv1"),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["y"], name="conv2")]
    side = 9 if ceil_mode else 8  # ceil_mode's last window reaches past the padding
    graph = helper.make_graph(nodes, "pooled", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, side, side])],
                              initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    build = pathlib.Path(os.environ.get("SY_BUILD_DIR", "build"))
    names = qdq_model.quantized_tensors(model.graph)
    ranges = qdq_model.activation_ranges(model, names, qdq_model.calibration_inputs(model, 2), build)
    path = tmp_path / "pooled_qdq.onnx"
    onnx.save(qdq_model.make_qdq(model, ranges), str(path))
    return path, qdq_model.calibration_inputs(model, 1, seed=9)[0]


@pytest.mark.parametrize("ceil_mode", [False, True])
def test_a_max_pool_of_dequantized_values_pools_the_8bit_values(tmp_path, ceil_mode):
    # max_pool(dequantize(q)) == dequantize(max_pool(q)) exactly (a positive
    # scale keeps the order), so FuseQDQ pools the uint8 values: conv0 writes
    # them, oneDNN's 8-bit max pool reads and writes them channels last.
    path, x = pooled_chain(tmp_path, ceil_mode)
    fused = fused_module(path)
    # The pool reads qnn.conv2d's uint8 result; the dequantize follows it.
    lines = str(fused).splitlines()
    pool = next(i for i, line in enumerate(lines) if "nn.max_pool2d(" in line)
    assert "qnn.conv2d(" in lines[pool - 1] and 'cast(%' in lines[pool + 1], "\n".join(lines[pool - 1:pool + 2])
    sy.build(sy.frontend.from_onnx(path), ["cpu:0"], tmp_path / "artifact")
    manifest = json.loads((tmp_path / "artifact" / "manifest.json").read_text())
    pools = [p for p in manifest["primitives"] if p["kind"] == "pooling"]
    assert len(pools) == 1 and pools[0]["quantization"] == {"src_type": "u8", "dst_type": "u8"}, pools
    assert pools[0]["src"].get("format") == "nhwc" and pools[0]["dst"].get("format") == "nhwc", pools
    # conv0 then writes 8-bit values, channels last, with no dequantize after it.
    convolutions = [p for p in manifest["primitives"] if p["kind"] == "convolution"]
    assert convolutions[0]["quantization"]["dst_type"] == "u8" and convolutions[0]["dst"].get("format") == "nhwc"
    compiled = sy.runtime.load(tmp_path / "artifact").run(x=x)
    # Exact up to conv2, the float32 convolution (oneDNN's sums round otherwise).
    np.testing.assert_allclose(compiled, sy.evaluate(fused, x=x), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(compiled, sy.evaluate(sy.frontend.from_onnx(path), x=x), rtol=1e-5, atol=1e-5)


POOL_OF_DEQUANTIZED = """
def @main(%x: Tensor[(1, 16, 6, 6), uint8]) -> Tensor[(1, 16, {out}, {out}), float32] {{
  %0 = multiply(subtract(cast(%x, dtype="float32"), 3f), 0.25f);
  nn.max_pool2d(%0, pool_size=[2, 2], strides=[2, 2], padding=[{pad}, {pad}, {pad}, {pad}])
}}
"""


@pytest.mark.parametrize("pad, moved", [(1, True), (2, False)])
def test_a_pool_with_windows_of_padding_alone_stays_on_the_float_values(tmp_path, pad, moved):
    # With padding 2 and windows of 2, the corner windows hold padding alone:
    # their float max is -inf, the 8-bit pool's would be dequantize(0), so
    # the pool stays after the dequantize. Either way the artifact computes
    # what the interpreter does.
    out = (6 + 2 * pad - 2) // 2 + 1
    mod = sy.parse(POOL_OF_DEQUANTIZED.format(out=out, pad=pad))
    fused = T.Sequential([T.InferType(), T.PlanDevices(devices=["cpu:0"]), T.FuseQDQ()])(mod)
    text = str(fused)
    pooled_first = text.index("nn.max_pool2d") < text.index("cast(")
    assert pooled_first == moved, text
    x = np.random.default_rng(2).integers(0, 256, (1, 16, 6, 6)).astype(np.uint8)
    want = sy.evaluate(mod, x=x)
    assert np.isinf(want).any() == (not moved)
    sy.build(mod, ["cpu:0"], tmp_path / "artifact")
    got = sy.runtime.load(tmp_path / "artifact").run(x=x)
    np.testing.assert_array_equal(got, want)


INT8_POOL = """
def @main(%x: Tensor[(1, 24, 10, 10), {dtype}]) -> Tensor[(1, 24, {out}, {out}), {dtype}] {{
  nn.max_pool2d(%x, pool_size=[{k}, {k}], strides=[2, 2], padding=[{pad}, {pad}, {pad}, {pad}], ceil_mode={ceil})
}}
"""


@pytest.mark.parametrize("dtype", ["uint8", "int8"])
@pytest.mark.parametrize("k, pad, ceil", [(3, 1, False), (3, 1, True), (2, 2, False)])
def test_an_8bit_max_pool_runs_as_onednns_and_computes_the_interpreters_result(tmp_path, dtype, k, pad, ceil):
    # Every window holding an element, a window past the padding (ceil_mode),
    # windows of padding alone (the type's lowest value): the artifact's
    # result is the interpreter's, through oneDNN's 8-bit pool where it
    # takes the shape (it refuses padding as large as the window).
    count = (10 + 2 * pad - k + (1 if ceil else 0)) // 2 + 1
    mod = sy.parse(INT8_POOL.format(dtype=dtype, out=count, k=k, pad=pad, ceil=str(ceil)))
    low, high = (0, 256) if dtype == "uint8" else (-128, 128)
    x = np.random.default_rng(4).integers(low, high, (1, 24, 10, 10)).astype(dtype)
    sy.build(mod, ["cpu:0"], tmp_path / "artifact")
    np.testing.assert_array_equal(sy.runtime.load(tmp_path / "artifact").run(x=x), sy.evaluate(mod, x=x))
    manifest = json.loads((tmp_path / "artifact" / "manifest.json").read_text())
    pools = [p for p in manifest["primitives"] if p["kind"] == "pooling"]
    if pad < k:
        short = "u8" if dtype == "uint8" else "s8"
        assert [p["quantization"] for p in pools] == [{"src_type": short, "dst_type": short}], pools


def one_int8_primitive_results(tmp_path, path, operator, **inputs):
    """Fuses and builds the model at `path`: expects `operator` in the fused module and one int8 primitive
    in the artifact, whose result equals the fused module's interpreter. Returns it and the imported
    model's (ONNX's formula)."""
    mod = fused_module(path)
    assert operator in str(mod)
    sy.build(sy.frontend.from_onnx(path), ["cpu:0"], tmp_path / "artifact")
    assert len(int8_primitives(tmp_path / "artifact")) == 1
    compiled = sy.runtime.load(tmp_path / "artifact").run(**inputs)
    np.testing.assert_array_equal(compiled, sy.evaluate(mod, **inputs))
    return compiled, sy.evaluate(sy.frontend.from_onnx(path), **inputs)


def qlinear_conv_model(tmp_path, x_dtype, per_channel, w_zero_point, bias, groups=1):
    """One QLinearConv (ONNX's QOperator form, as ORT's QOperator quantization and the ONNX model zoo's
    int8 models write it): 3x3, padding 1, 16 -> 24 channels at 10x10. Returns the path and an input."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(11)
    w = rng.integers(-100, 100, (24, 16 // groups, 3, 3)).astype(np.int8)
    x_zp = 128 if x_dtype == np.uint8 else 3
    scales = (rng.uniform(0.005, 0.02, 24) if per_channel else np.array(0.01)).astype(np.float32)
    zero_points = np.full(scales.shape, w_zero_point, np.int8)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array(0.02, np.float32), "xs"),
             numpy_helper.from_array(np.array(x_zp, x_dtype), "xz"), numpy_helper.from_array(scales, "ws"),
             numpy_helper.from_array(zero_points, "wz"), numpy_helper.from_array(np.array(0.25, np.float32), "ys"),
             numpy_helper.from_array(np.array(100 if x_dtype == np.uint8 else -5, x_dtype), "yz")]
    inputs = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"]
    if bias:
        inits.append(numpy_helper.from_array(rng.integers(-3000, 3000, 24).astype(np.int32), "b"))
        inputs.append("b")
    onnx_type = TensorProto.UINT8 if x_dtype == np.uint8 else TensorProto.INT8
    node = helper.make_node("QLinearConv", inputs, ["y"], pads=[1, 1, 1, 1], group=groups)
    graph = helper.make_graph([node], "qlinear", [helper.make_tensor_value_info("x", onnx_type, [1, 16, 10, 10])],
                              [helper.make_tensor_value_info("y", onnx_type, [1, 24, 10, 10])], inits)
    path = tmp_path / "qlinear.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    info = np.iinfo(x_dtype)
    return path, rng.integers(info.min, int(info.max) + 1, (1, 16, 10, 10)).astype(x_dtype)


@pytest.mark.parametrize("x_dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("per_channel, w_zero_point, bias, groups",
                         [(False, 0, True, 1), (True, 0, False, 1), (True, 7, True, 1), (False, 0, True, 4)])
def test_a_qlinear_conv_runs_as_an_int8_primitive(tmp_path, x_dtype, per_channel, w_zero_point, bias, groups):
    # QLinearConv imported as an int32 convolution ran as a generated loop
    # (20-60x an int8 primitive). FuseQDQ takes it to qnn.conv2d (the
    # weights less their zero point as int8, the int32 bias in the
    # accumulator's units): the artifact equals the fused module's
    # interpreter, and ONNX's formula (the imported model) to one quantum.
    path, x = qlinear_conv_model(tmp_path, x_dtype, per_channel, w_zero_point, bias, groups)
    compiled, imported = one_int8_primitive_results(tmp_path, path, "qnn.conv2d", x=x)
    off = np.abs(compiled.astype(np.int64) - imported.astype(np.int64))
    assert off.max() <= 1 and off.mean() < 0.01
    info = np.iinfo(x_dtype)
    assert ((imported > info.min) & (imported < info.max)).mean() > 0.5  # mostly unsaturated


def test_qlinear_weights_beyond_int8_less_their_zero_point_keep_the_int32_path(tmp_path):
    # w - w_zero_point must fit int8 for the int8 primitive: -100 - 50 does not.
    path, x = qlinear_conv_model(tmp_path, np.uint8, False, 50, True)
    mod = fused_module(path)
    assert "qnn.conv2d" not in str(mod)
    sy.build(sy.frontend.from_onnx(path), ["cpu:0"], tmp_path / "artifact")
    np.testing.assert_array_equal(sy.runtime.load(tmp_path / "artifact").run(x=x),
                                  sy.evaluate(sy.frontend.from_onnx(path), x=x))


def qdq_matmul_3d(tmp_path, x_dtype):
    """x (2, 5, 16) float -> QuantizeLinear -> DequantizeLinear -> MatMul by dequantized int8 (16, 12) weights
    (per column) -> Add bias -> QuantizeLinear -> DequantizeLinear: a transformer's projection in QDQ form."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(13)
    x_zp = 120 if x_dtype == np.uint8 else -3
    y_zp = 130 if x_dtype == np.uint8 else 4
    inits = [numpy_helper.from_array(rng.integers(-100, 100, (16, 12)).astype(np.int8), "w"),
             numpy_helper.from_array(rng.uniform(0.004, 0.01, 12).astype(np.float32), "ws"),
             numpy_helper.from_array(np.zeros(12, np.int8), "wz"),
             numpy_helper.from_array(rng.standard_normal(12).astype(np.float32) * 0.1, "b"),
             numpy_helper.from_array(np.array(0.02, np.float32), "xs"),
             numpy_helper.from_array(np.array(x_zp, x_dtype), "xz"),
             numpy_helper.from_array(np.array(0.03, np.float32), "ys"),
             numpy_helper.from_array(np.array(y_zp, x_dtype), "yz")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=1),
             helper.make_node("MatMul", ["xd", "wd"], ["m"]),
             helper.make_node("Add", ["m", "b"], ["a"]),
             helper.make_node("QuantizeLinear", ["a", "ys", "yz"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    graph = helper.make_graph(nodes, "projection", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5, 12])], inits)
    path = tmp_path / "projection.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return path, rng.standard_normal((2, 5, 16)).astype(np.float32)


@pytest.mark.parametrize("x_dtype", [np.uint8, np.int8])
def test_a_qdq_matmul_of_3d_data_runs_as_int8_rows(tmp_path, x_dtype):
    # A transformer's (batch, tokens, K) activations by (K, N) weights: the
    # 8-bit data's rows (10, 16) through qnn.dense, reshaped back.
    path, x = qdq_matmul_3d(tmp_path, x_dtype)
    compiled, imported = one_int8_primitive_results(tmp_path, path, "qnn.dense", x=x)
    assert compiled.shape == (2, 5, 12)
    # Within one quantum of the output's scale of ONNX's formula.
    assert np.abs(compiled - imported).max() <= 0.03 * 1.0001
    assert (compiled != imported).mean() < 0.05


def qlinear_matmul_model(tmp_path, a_dtype, a_shape, per_column, b_zero_point):
    """One QLinearMatMul of a (a_shape, ..., 16) by constant int8 b (16, 12)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(17)
    scales = (rng.uniform(0.005, 0.02, 12) if per_column else np.array(0.01)).astype(np.float32)
    inits = [numpy_helper.from_array(rng.integers(-100, 100, (16, 12)).astype(np.int8), "b"),
             numpy_helper.from_array(np.array(0.02, np.float32), "as"),
             numpy_helper.from_array(np.array(128 if a_dtype == np.uint8 else 3, a_dtype), "az"),
             numpy_helper.from_array(scales, "bs"),
             numpy_helper.from_array(np.full(scales.shape, b_zero_point, np.int8), "bz"),
             numpy_helper.from_array(np.array(0.05, np.float32), "ys"),
             numpy_helper.from_array(np.array(100 if a_dtype == np.uint8 else -5, a_dtype), "yz")]
    onnx_type = TensorProto.UINT8 if a_dtype == np.uint8 else TensorProto.INT8
    node = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])
    graph = helper.make_graph([node], "qmatmul", [helper.make_tensor_value_info("a", onnx_type, list(a_shape))],
                              [helper.make_tensor_value_info("y", onnx_type, list(a_shape[:-1]) + [12])], inits)
    path = tmp_path / "qmatmul.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    info = np.iinfo(a_dtype)
    return path, rng.integers(info.min, int(info.max) + 1, a_shape).astype(a_dtype)


@pytest.mark.parametrize("a_dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("a_shape, per_column, b_zero_point",
                         [((6, 16), False, 0), ((2, 5, 16), True, 0), ((2, 5, 16), False, 9)])
def test_a_qlinear_matmul_runs_as_an_int8_primitive(tmp_path, a_dtype, a_shape, per_column, b_zero_point):
    # QLinearMatMul by constant weights: qnn.dense of a's rows (reshaped
    # when a has more than two dimensions), b less its zero point
    # transposed as int8; the artifact equals the fused module's
    # interpreter, ONNX's formula to one quantum.
    path, a = qlinear_matmul_model(tmp_path, a_dtype, a_shape, per_column, b_zero_point)
    compiled, imported = one_int8_primitive_results(tmp_path, path, "qnn.dense", a=a)
    off = np.abs(compiled.astype(np.int64) - imported.astype(np.int64))
    assert compiled.shape == imported.shape and off.max() <= 1 and off.mean() < 0.02
    info = np.iinfo(a_dtype)
    assert ((imported > info.min) & (imported < info.max)).mean() > 0.5


def matmul_integer_model(tmp_path, a_dtype, a_shape, n, a_zero_point_input):
    """MatMulInteger of a (an input) by constant int8 b (K, n), a's zero point an input too when
    `a_zero_point_input` (dynamic quantization computes it at run time), else the constant 7."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(19)
    k = a_shape[-1]
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    b[:, 0] = -128  # a column at the extreme: with a row of a at its own, the widest sum
    onnx_type = TensorProto.UINT8 if a_dtype == np.uint8 else TensorProto.INT8
    inputs = [helper.make_tensor_value_info("a", onnx_type, list(a_shape))]
    inits = [numpy_helper.from_array(b, "b"), numpy_helper.from_array(np.array(0, np.int8), "bz")]
    if a_zero_point_input:
        inputs.append(helper.make_tensor_value_info("az", onnx_type, []))
    else:
        inits.append(numpy_helper.from_array(np.array(7, a_dtype), "az"))
    node = helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])
    graph = helper.make_graph([node], "mmi", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.INT32, list(a_shape[:-1]) + [n])], inits)
    path = tmp_path / "mmi.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return path


@pytest.mark.parametrize("a_dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("a_shape, zero_point_input", [((6, 768), True), ((2, 3, 600), False), ((4, 40), True)])
def test_an_int32_matmul_of_8bit_data_runs_as_float_chunks_exactly(tmp_path, a_dtype, a_shape, zero_point_input):
    # Dynamic quantization's MatMulInteger ran as a generated int32 loop.
    # It now runs as float32 matmuls of K-chunks short enough that every
    # partial sum is an integer below 2^24 (768 = 2 x 384; 600 = 2 x 300;
    # 40 in one), the chunks summed in int32: exact, the extremes included.
    path = matmul_integer_model(tmp_path, a_dtype, a_shape, 24, zero_point_input)
    info = np.iinfo(a_dtype)
    rng = np.random.default_rng(23)
    a = rng.integers(info.min, int(info.max) + 1, a_shape).astype(a_dtype)
    a[..., 0, :] = info.max if a_dtype == np.uint8 else info.min  # a row at the extreme
    inputs = {"a": a}
    if zero_point_input:
        inputs["az"] = np.array(info.min if a_dtype == np.uint8 else info.max, a_dtype)  # the widest difference
    mod = sy.frontend.from_onnx(path)
    sy.build(mod, ["cpu:0"], tmp_path / "artifact")
    compiled = sy.runtime.load(tmp_path / "artifact").run(**inputs)
    want = sy.evaluate(mod, **inputs)
    # Sums where float32's 24 bits matter (one sum in float32 of 768 such terms would not be exact).
    assert want.dtype == np.int32 and (np.abs(want).max() > 2 ** 23) == (a_shape[-1] > 500)
    np.testing.assert_array_equal(compiled, want)
    manifest = json.loads((tmp_path / "artifact" / "manifest.json").read_text())
    assert any(p["kind"] == "matmul" for p in manifest["primitives"]), "the product is the library's"
