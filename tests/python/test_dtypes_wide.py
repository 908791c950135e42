# The wide and unsigned element types (float64, int16, uint16, uint32,
# uint64) end to end: models of each through the interpreter (sy.evaluate)
# and a compiled artifact (sy.build), compared with NumPy; wrap-around of
# unsigned overflow; float64 keeping what float32 rounds away; and an
# operator oneDNN computes in float32 given float64 (computed in double by
# the generated loops, or refused, never rounded).
import os
import pathlib
import subprocess

import numpy as np
import pytest

import switchyard as sy

REPO = pathlib.Path(__file__).resolve().parents[2]
SWITCHYARD = pathlib.Path(os.environ.get("SY_BUILD_DIR", REPO / "build")) / "bin" / "switchyard"

NEW_DTYPES = ["float64", "int16", "uint16", "uint32", "uint64"]
RNG = np.random.default_rng(11)


def sample(dtype, shape, low=1, high=50):
    if np.dtype(dtype).kind == "f":
        return RNG.uniform(-3, 3, shape).astype(dtype)
    return RNG.integers(low, high, shape).astype(dtype)


def both_ways(tmp_path, text, float_sums=(), **inputs):
    """The interpreter's outputs (a list), checked equal, bit for bit, to the compiled artifact's.

    Outputs listed in `float_sums` are floating-point sums, which the
    compiled loop may add in another order (vector lanes, as wide as the
    CPU's): those agree to a few units in the last place.
    """
    mod = sy.parse(text)
    expected = sy.evaluate(mod, **inputs)
    expected = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    sy.build(mod, ["cpu:0"], tmp_path / "artifact")
    got = sy.runtime.load(tmp_path / "artifact").run(**inputs)
    got = list(got) if isinstance(got, (list, tuple)) else [got]
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        assert g.dtype == e.dtype and g.shape == e.shape
        if i in float_sums and g.dtype.kind == "f":
            np.testing.assert_allclose(g, e, rtol=4 * np.finfo(g.dtype).eps, atol=0)
        else:
            np.testing.assert_array_equal(g, e)
    return expected


@pytest.mark.parametrize("dtype", NEW_DTYPES)
def test_arithmetic_and_a_reduction_match_numpy(tmp_path, dtype):
    a, b = sample(dtype, (3, 4)), sample(dtype, (4,))
    text = f"""
def @main(%a: Tensor[(3, 4), {dtype}], %b: Tensor[(4), {dtype}]) {{
  %0 = add(%a, %b);
  %1 = multiply(%0, %b);
  %2 = divide(%1, %b);
  (%0, %1, %2, sum(%1, axis=[1]), max(%0, axis=[0]))
}}
"""
    add, product, quotient, total, largest = both_ways(tmp_path, text, float_sums=(3,), a=a, b=b)
    np.testing.assert_array_equal(add, a + b)
    np.testing.assert_array_equal(product, (a + b) * b)
    if dtype == "float64":
        np.testing.assert_array_equal(quotient, (a + b) * b / b)
        np.testing.assert_allclose(total, ((a + b) * b).sum(axis=1), rtol=1e-14)
    else:  # positive operands: truncation is floor division
        np.testing.assert_array_equal(quotient, (a + b) * b // b)
        np.testing.assert_array_equal(total, ((a + b) * b).sum(axis=1, dtype=dtype))
    np.testing.assert_array_equal(largest, (a + b).max(axis=0))
    assert add.dtype == np.dtype(dtype) and total.dtype == np.dtype(dtype)


@pytest.mark.parametrize("dtype", NEW_DTYPES)
@pytest.mark.parametrize("other", ["float32", "int64"])
def test_casts_to_and_from_float32_and_int64(tmp_path, dtype, other):
    x = sample(dtype, (2, 5))
    y = sample(other, (2, 5), 0, 100) if other == "int64" else RNG.uniform(0, 100, (2, 5)).astype(np.float32)
    text = f"""
def @main(%x: Tensor[(2, 5), {dtype}], %y: Tensor[(2, 5), {other}]) {{
  (cast(%x, dtype="{other}"), cast(%y, dtype="{dtype}"))
}}
"""
    to_other, to_new = both_ways(tmp_path, text, x=x, y=y)
    np.testing.assert_array_equal(to_other, x.astype(other))
    # Float to integer truncates toward zero, as NumPy's astype does for these values.
    np.testing.assert_array_equal(to_new, y.astype(dtype))


@pytest.mark.parametrize("dtype", NEW_DTYPES)
def test_transpose_and_concatenate_move_the_values_exactly(tmp_path, dtype):
    a, b = sample(dtype, (2, 3)), sample(dtype, (1, 3))
    text = f"""
def @main(%a: Tensor[(2, 3), {dtype}], %b: Tensor[(1, 3), {dtype}]) {{
  %0 = concatenate((%a, %b), axis=0);
  transpose(%0, axes=[1, 0])
}}
"""
    (got,) = both_ways(tmp_path, text, a=a, b=b)
    np.testing.assert_array_equal(got, np.concatenate([a, b]).T)


@pytest.mark.parametrize("dtype, bits", [("uint16", 16), ("uint32", 32), ("uint64", 64)])
def test_unsigned_overflow_wraps_as_numpy(tmp_path, dtype, bits):
    top = np.array([2**bits - 1, 2**bits - 2, 5], dtype)
    two = np.array([2, 3, 7], dtype)
    text = f"""
def @main(%x: Tensor[(3), {dtype}], %y: Tensor[(3), {dtype}]) {{
  %0 = add(%x, %y);
  %1 = subtract(%y, %x);
  %2 = multiply(%x, %y);
  (%0, %1, %2, divide(%1, %y), maximum(%1, %y), less(%1, %y))
}}
"""
    total, difference, product, quotient, larger, smaller = both_ways(tmp_path, text, x=top, y=two)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(total, top + two)
        np.testing.assert_array_equal(difference, two - top)
        np.testing.assert_array_equal(product, top * two)
        np.testing.assert_array_equal(quotient, (two - top) // two)
        np.testing.assert_array_equal(larger, np.maximum(two - top, two))
        np.testing.assert_array_equal(smaller, (two - top) < two)


def test_int16_overflow_wraps(tmp_path):
    x = np.array([32767, -32768, 300], np.int16)
    text = """
def @main(%x: Tensor[(3), int16]) {
  (add(%x, 1i16), multiply(%x, %x))
}
"""
    plus_one, square = both_ways(tmp_path, text, x=x)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(plus_one, x + np.int16(1))
        np.testing.assert_array_equal(square, x * x)


def test_float64_keeps_what_float32_loses(tmp_path):
    text = """
def @main(%x: Tensor[(2), float64]) {
  %0 = add(%x, 1e-12f64);
  (%0, subtract(%0, %x), cast(cast(%0, dtype="float32"), dtype="float64"))
}
"""
    x = np.array([1.0, 0.1])
    shifted, difference, rounded = both_ways(tmp_path, text, x=x)
    assert shifted[0] != 1.0 and shifted[0] == 1.0 + 1e-12
    np.testing.assert_array_equal(difference, (x + 1e-12) - x)
    assert rounded[0] == 1.0  # float32 has no 1 + 1e-12
    assert rounded[1] == np.float64(np.float32(0.1 + 1e-12))


def test_convolution_of_float64_is_computed_in_double(tmp_path):
    # oneDNN's convolution takes float32 only; float64 goes to the plain
    # loops, which accumulate in double and so match a float64 reference
    # far closer than a float32 computation could.
    x, w = RNG.standard_normal((1, 3, 6, 6)), RNG.standard_normal((4, 3, 3, 3))
    text = """
def @main(%x: Tensor[(1, 3, 6, 6), float64], %w: Tensor[(4, 3, 3, 3), float64]) {
  nn.conv2d(%x, %w, padding=[1, 1])
}
"""
    (got,) = both_ways(tmp_path, text, x=x, w=w)
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    expected = np.zeros((1, 4, 6, 6))
    for i in range(6):
        for j in range(6):
            expected[0, :, i, j] = np.tensordot(w, padded[0, :, i:i + 3, j:j + 3], axes=3)
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13)


def test_softmax_and_layer_norm_of_float64_keep_double_precision(tmp_path):
    # Their CPU loops keep float32 values for float32, float16 and bfloat16,
    # and double ones for float64.
    text = """
def @main(%x: Tensor[(2, 5), float64], %g: Tensor[(5), float64], %b: Tensor[(5), float64]) {
  (nn.softmax(%x), nn.layer_norm(%x, %g, %b))
}
"""
    mod = sy.parse(text)
    x, g, b = RNG.standard_normal((2, 5)), RNG.uniform(0.5, 2, 5), RNG.uniform(-1, 1, 5)
    softmax = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    deviation = x - x.mean(axis=1, keepdims=True)
    layer_norm = deviation / np.sqrt((deviation**2).mean(axis=1, keepdims=True) + 1e-5) * g + b
    sy.build(mod, ["cpu:0"], tmp_path / "artifact")
    compiled = sy.runtime.load(tmp_path / "artifact").run(x=x, g=g, b=b)
    for got in (sy.evaluate(mod, x=x, g=g, b=b), compiled):
        np.testing.assert_allclose(got[0], softmax, rtol=1e-14)
        np.testing.assert_allclose(got[1], layer_norm, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("dtype", NEW_DTYPES)
def test_constants_of_the_new_dtypes_come_from_numpy(dtype):
    values = np.array([1, 2, 3], dtype)
    constant = sy.ir.const(values)
    assert constant.dtype == dtype
    np.testing.assert_array_equal(constant.data, values)


# ---- ONNX ---------------------------------------------------------------------

def onnx_model(tmp_path, nodes, inputs, outputs, initializers=()):
    import onnx
    from onnx import helper
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    path = tmp_path / f"model_{len(list(tmp_path.glob('*.onnx')))}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def test_onnx_initializers_in_the_typed_fields_of_the_new_types(tmp_path):
    # DOUBLE in double_data, UINT32 and UINT64 in uint64_data, INT16 and
    # UINT16 in int32_data: the fields ONNX keeps them in when not raw.
    from onnx import TensorProto, helper
    cases = [(TensorProto.DOUBLE, "float64", [0.1, 1e-12, -2.5]),
             (TensorProto.UINT64, "uint64", [2**64 - 1, 0, 2**63]),
             (TensorProto.UINT32, "uint32", [2**32 - 1, 0, 7]),
             (TensorProto.UINT16, "uint16", [65535, 0, 7]),
             (TensorProto.INT16, "int16", [-32768, 32767, 7])]
    for onnx_type, dtype, values in cases:
        constant = helper.make_tensor("c", onnx_type, [3], values)
        path = onnx_model(tmp_path, [helper.make_node("Add", ["x", "c"], ["y"])],
                          [helper.make_tensor_value_info("x", onnx_type, [3])],
                          [helper.make_tensor_value_info("y", onnx_type, [3])], [constant])
        x = np.array([1, 2, 3], dtype)
        mod = sy.frontend.from_onnx(path)
        got = sy.evaluate(mod, x=x)
        sy.build(mod, ["cpu:0"], tmp_path / dtype)
        compiled = sy.runtime.load(tmp_path / dtype).run(x=x)
        with np.errstate(over="ignore"):
            expected = x + np.array(values, dtype)
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(compiled, expected)
        assert got.dtype == np.dtype(dtype)


def test_onnx_uint32_beyond_its_range_is_refused_naming_the_tensor(tmp_path):
    from onnx import TensorProto, helper
    constant = helper.make_tensor("big", TensorProto.UINT32, [1], [2**32])
    path = onnx_model(tmp_path, [helper.make_node("Identity", ["big"], ["y"])], [],
                      [helper.make_tensor_value_info("y", TensorProto.UINT32, [1])], [constant])
    with pytest.raises(sy.Error, match=r"big.*uint64_data holds 4294967296 at element 0, outside the range of UINT32"):
        sy.frontend.from_onnx(path)


def test_onnx_cast_between_float64_and_uint64(tmp_path):
    from onnx import TensorProto, helper
    path = onnx_model(tmp_path, [helper.make_node("Cast", ["x"], ["u"], to=TensorProto.UINT64),
                                 helper.make_node("Cast", ["u"], ["y"], to=TensorProto.DOUBLE)],
                      [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [3])],
                      [helper.make_tensor_value_info("u", TensorProto.UINT64, [3]),
                       helper.make_tensor_value_info("y", TensorProto.DOUBLE, [3])])
    x = np.array([1e19, 3.7, 2.0**63])
    mod = sy.frontend.from_onnx(path)
    interpreted = sy.evaluate(mod, x=x)
    sy.build(mod, ["cpu:0"], tmp_path / "artifact")
    compiled = sy.runtime.load(tmp_path / "artifact").run(x=x)
    for u, y in (interpreted, compiled):
        np.testing.assert_array_equal(u, x.astype(np.uint64))  # beyond int64, exactly
        np.testing.assert_array_equal(y, x.astype(np.uint64).astype(np.float64))


def test_onnx_layer_normalization_of_float64(tmp_path):
    # nn.layer_norm, in double; ONNX's stash_type 1 takes the statistics in
    # float32, which the tolerance allows for (as for float16).
    from onnx import TensorProto, helper
    path = onnx_model(tmp_path, [helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1)],
                      [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [3, 8])],
                      [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [3, 8])],
                      [helper.make_tensor("g", TensorProto.DOUBLE, [8], g := RNG.uniform(0.5, 2, 8)),
                       helper.make_tensor("b", TensorProto.DOUBLE, [8], b := RNG.uniform(-1, 1, 8))])
    x = RNG.standard_normal((3, 8))
    mod = sy.frontend.from_onnx(path)
    interpreted = sy.evaluate(mod, x=x)
    sy.build(mod, ["cpu:0"], tmp_path / "artifact")
    compiled = sy.runtime.load(tmp_path / "artifact").run(x=x)
    # ONNX's function body: statistics of x in float32, then scale and bias in float64.
    x32 = x.astype(np.float32)
    mean = x32.mean(axis=-1, keepdims=True)
    deviation = x32 - mean
    normalized = deviation / np.sqrt((deviation * deviation).mean(axis=-1, keepdims=True) + np.float32(1e-5))
    expected = normalized.astype(np.float64) * g + b
    for got in (interpreted, compiled):
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


# ---- .npy on the command line --------------------------------------------------

def bfloat16_bits(values):
    """The bfloat16 bits of float32 values that bfloat16 holds exactly."""
    return (np.asarray(values, np.float32).view(np.uint32) >> 16).astype(np.uint16)


@pytest.mark.parametrize("command", ["run-ir", "run"])
def test_a_bfloat16_input_given_as_its_uint16_bits_in_npy(tmp_path, command):
    # NumPy has no bfloat16: '<u2' (uint16) is how its bits travel in .npy,
    # and now also how uint16 does; an input the model takes as bfloat16
    # reads them as bfloat16, as before uint16 was an element type.
    model = tmp_path / "double.sy"
    model.write_text("def @main(%x: Tensor[(3), bfloat16]) {\n  add(%x, %x)\n}\n")
    np.save(tmp_path / "x.npy", bfloat16_bits([1.5, -2, 0.25]))
    if command == "run":
        subprocess.run([str(SWITCHYARD), "compile", str(model), "-o", str(tmp_path / "artifact")], check=True,
                       capture_output=True, timeout=300)
        args = ["run", str(tmp_path / "artifact")]
    else:
        args = ["run-ir", str(model)]
    done = subprocess.run([str(SWITCHYARD), *args, "--input", f"x={tmp_path / 'x.npy'}", "--output-dir",
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (written,) = list((tmp_path / "out").glob("*.npy"))
    np.testing.assert_array_equal(np.load(written), bfloat16_bits([3, -4, 0.5]))


@pytest.mark.parametrize("dtype, onnx_name", [("uint16", "UINT16"), ("uint32", "UINT32"), ("uint64", "UINT64"),
                                              ("int16", "INT16")])
def test_onnx_argmin_of_the_wide_unsigned_and_int16_types(tmp_path, dtype, onnx_name):
    # ArgMin flips the order to use the max reduction: -1 - x, which in an
    # unsigned type wraps to its max - x, whatever its width.
    from onnx import TensorProto, helper
    onnx_type = getattr(TensorProto, onnx_name)
    path = onnx_model(tmp_path, [helper.make_node("ArgMin", ["x"], ["y"], axis=1, keepdims=0)],
                      [helper.make_tensor_value_info("x", onnx_type, [2, 4])],
                      [helper.make_tensor_value_info("y", TensorProto.INT64, [2])])
    info = np.iinfo(dtype)
    x = np.array([[300, info.max, 299, 1000], [info.max, info.max - 1, 7, info.max]], dtype)
    mod = sy.frontend.from_onnx(path)
    interpreted = sy.evaluate(mod, x=x)
    sy.build(mod, ["cpu:0"], tmp_path / "artifact")
    compiled = sy.runtime.load(tmp_path / "artifact").run(x=x)
    np.testing.assert_array_equal(interpreted, x.argmin(axis=1))
    np.testing.assert_array_equal(compiled, x.argmin(axis=1))


def test_torch_float64_and_int16_tensors_run_through_dlpack(tmp_path):
    torch = pytest.importorskip("torch", reason="PyTorch is needed for DLPack tensors")
    text = """
def @main(%x: Tensor[(2, 3), float64], %i: Tensor[(2, 3), int16]) {
  (multiply(%x, 3f64), add(%i, 1i16))
}
"""
    sy.build(sy.parse(text), ["cpu:0"], tmp_path / "artifact")
    x = torch.tensor([[0.1, 1 + 1e-12, -2.0], [3.0, 4.0, 5.0]], dtype=torch.float64)
    i = torch.tensor([[32767, 0, -5], [1, 2, 3]], dtype=torch.int16)
    tripled, next_one = sy.runtime.load(tmp_path / "artifact").run(x=x, i=i)
    np.testing.assert_array_equal(tripled, x.numpy() * 3)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(next_one, i.numpy() + np.int16(1))
    assert torch.from_dlpack(tripled).dtype == torch.float64
