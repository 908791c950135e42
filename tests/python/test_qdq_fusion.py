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


def test_inspect_names_the_int8_primitive(tmp_path):
    case = qdq.Case(np.uint8, (8, 6, 3, 3), (1, 6, 8, 8), 0, True)
    path = case.graph("Conv", True, pads=[1, 1, 1, 1]).save(tmp_path / "model.onnx", case.x, ("y",))
    sy.build(sy.frontend.from_onnx(path), ["cpu:0"], tmp_path / "artifact")
    cli = pathlib.Path(os.environ.get("SY_BUILD_DIR", "build")) / "bin" / "switchyard"
    text = subprocess.run([str(cli), "inspect", str(tmp_path / "artifact"), "--implementations"], check=True,
                          capture_output=True, text=True).stdout
    assert "int8 u8s8u8" in text, text
