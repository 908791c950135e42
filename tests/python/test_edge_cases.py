# The edge cases of docs/operators.md ("Edge cases") from Python, through
# sy.evaluate (the interpreter) and a compiled artifact on the same inputs:
# NaN, infinities and -0 come out alike, integers wrap, and the cases the
# rules call errors (integer division by zero, take "fast" and ONNX Gather
# out of range) fail both ways with the same words, the artifact naming the
# kernel that failed.
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import switchyard as sy

NAN, INF = np.float32(np.nan), np.float32(np.inf)


def both_ways(tmp_path, text):
    mod = sy.parse(text, source_name="edge.sy")
    out = tmp_path / "artifact"
    sy.build(mod, devices=["cpu:0"], output=out)
    return mod, sy.runtime.load(out)


def as_list(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


def assert_same_bits(actual, expected):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if actual.dtype.kind == "f":
        both_nan = np.isnan(actual) & np.isnan(expected)
        np.testing.assert_array_equal(np.where(both_nan, 0, actual), np.where(both_nan, 0, expected))
        np.testing.assert_array_equal(np.signbit(actual[~both_nan]), np.signbit(expected[~both_nan]))
    else:
        np.testing.assert_array_equal(actual, expected)


def test_nan_inf_and_signed_zero_agree_and_follow_numpy(tmp_path):
    text = ("def @main(%a: Tensor[(8), float32], %b: Tensor[(8), float32]) {\n"
            "  (maximum(%a, %b), minimum(%a, %b), nn.relu(%a), clip(%a, a_min=-1, a_max=1), max(%a))\n"
            "}\n")
    a = np.array([NAN, 1, -INF, -0.0, 0.0, 2, INF, -3], np.float32)
    b = np.array([1, NAN, 3, 0.0, -0.0, NAN, -INF, -4], np.float32)
    mod, model = both_ways(tmp_path, text)
    interpreted = as_list(sy.evaluate(mod, a=a, b=b))
    compiled = as_list(model.run(a=a, b=b))
    for got, want in zip(compiled, interpreted):
        assert_same_bits(got, want)
    # NaN propagates as NumPy's maximum and minimum; relu and clip ignore it
    # (relu(NaN) is 0, clip(NaN) is a_min), as oneDNN's post-ops; relu(-0) is +0.
    assert_same_bits(compiled[0], np.maximum(a, b))
    assert_same_bits(compiled[1], np.minimum(a, b))
    assert_same_bits(compiled[2], np.where(a > 0, a, np.float32(0)))
    assert_same_bits(compiled[3], np.where(a > 1, np.float32(1), np.where(a > -1, a, np.float32(-1))))
    assert compiled[2][0] == 0 and not np.signbit(compiled[2][3]) and compiled[3][0] == -1
    assert np.isnan(compiled[4])


def test_integer_overflow_wraps_and_casts_saturate_then_wrap(tmp_path):
    text = ("def @main(%a: Tensor[(4), int32], %b: Tensor[(4), int32], %x: Tensor[(6), float32]) {\n"
            "  (add(%a, %b), multiply(%a, %b), cast(%x, dtype=\"int32\"), cast(%x, dtype=\"int8\"))\n"
            "}\n")
    inputs = dict(a=np.array([2**31 - 1, -2**31, 65536, -7], np.int32),
                  b=np.array([1, -1, 65536, 3], np.int32),
                  x=np.array([NAN, INF, -INF, 3e9, 300, -1.5], np.float32))
    mod, model = both_ways(tmp_path, text)
    interpreted = as_list(sy.evaluate(mod, **inputs))
    compiled = as_list(model.run(**inputs))
    for got, want in zip(compiled, interpreted):
        assert_same_bits(got, want)
    wrapped = (inputs["a"].astype(np.int64) + inputs["b"]).astype(np.int32)
    np.testing.assert_array_equal(compiled[0], wrapped)
    np.testing.assert_array_equal(compiled[2], [0, -1, 0, -1294967296, 300, -1])
    np.testing.assert_array_equal(compiled[3], [0, -1, 0, 0, 44, -1])


def expect_both_fail(mod, model, words, **inputs):
    with pytest.raises(sy.RuntimeError, match=words):
        sy.evaluate(mod, **inputs)
    with pytest.raises(sy.RuntimeError, match=r"kernel \d+ '.*' \(from .*\): .*" + words):
        model.run(**inputs)


def test_integer_division_by_zero_fails_both_ways(tmp_path):
    text = ("def @main(%a: Tensor[(3), int64], %b: Tensor[(3), int64]) {\n"
            "  divide(%a, %b)\n"
            "}\n")
    mod, model = both_ways(tmp_path, text)
    a = np.array([6, -7, 8], np.int64)
    np.testing.assert_array_equal(model.run(a=a, b=np.array([3, 2, -1], np.int64)), [2, -3, -8])
    expect_both_fail(mod, model, "integer division by zero", a=a, b=np.array([3, 0, 1], np.int64))
    # The artifact is still usable after a failed run.
    np.testing.assert_array_equal(model.run(a=a, b=np.array([1, 1, 1], np.int64)), a)


def gather_model(tmp_path, op="Gather", index_shape=(3,), output_shape=(3, 2), axis=0):
    nodes = [helper.make_node(op, ["x", "i"], ["y"], name="lookup", axis=axis)]
    graph = helper.make_graph(nodes, "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 2]),
                               helper.make_tensor_value_info("i", TensorProto.INT64, list(index_shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(output_shape))])
    path = tmp_path / f"{op}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    mod = sy.frontend.from_onnx(path)
    out = tmp_path / op
    sy.build(mod, devices=["cpu:0"], output=out)
    return mod, sy.runtime.load(out)


def test_onnx_gather_counts_negative_indices_from_the_end_and_refuses_out_of_range(tmp_path):
    mod, model = gather_model(tmp_path)
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    inside = np.array([-1, 0, -4], np.int64)
    np.testing.assert_array_equal(model.run(x=x, i=inside), x[inside])
    np.testing.assert_array_equal(sy.evaluate(mod, x=x, i=inside), x[inside])
    for outside in ([0, 4, 1], [-5, 0, 1]):
        expect_both_fail(mod, model, "take index", x=x, i=np.array(outside, np.int64))


def test_onnx_gather_elements_counts_negative_indices_from_the_end_and_refuses_out_of_range(tmp_path):
    # Along axis 1 of a 4x2 input an index of 2 would read the next row's
    # first element of the flattened data; it is an error instead.
    mod, model = gather_model(tmp_path, "GatherElements", index_shape=(4, 2), output_shape=(4, 2), axis=1)
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    inside = np.array([[1, 0], [-1, -2], [0, 0], [1, -1]], np.int64)
    expected = np.take_along_axis(x, inside % 2, axis=1)
    np.testing.assert_array_equal(model.run(x=x, i=inside), expected)
    np.testing.assert_array_equal(sy.evaluate(mod, x=x, i=inside), expected)
    for bad in (2, -3):
        outside = inside.copy()
        outside[1, 0] = bad
        expect_both_fail(mod, model, "take index", x=x, i=outside)
