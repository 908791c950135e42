# Scalars (0-d tensors) across the Python boundary: constants equal to the
# parsed literal, 0-d parameters fed to the interpreter and to a compiled
# artifact as NumPy 0-d arrays, NumPy scalars and Python numbers, and 0-d
# outputs coming back 0-d.
import numpy as np
import pytest

import switchyard as sy
from switchyard import ir

SCALED = """
def @main(%x: Tensor[(2, 2), float32], %s: Tensor[(), float32]) -> (Tensor[(2, 2), float32], Tensor[(), float32]) {
  %0 = multiply(%x, %s);
  (%0, sum(%0))
}
"""

X = np.arange(4, dtype=np.float32).reshape(2, 2)


def parsed_constant(literal, dtype="float32"):
    return sy.parse(f"def @main() -> Tensor[(), {dtype}] {{ {literal} }}")["main"].body


@pytest.mark.parametrize("made, literal", [
    (lambda: ir.const(0.0), "0f"),
    (lambda: ir.const(np.float32(2.5)), "2.5f"),
    (lambda: ir.Constant(np.array(3.0, np.float32)), "3f"),
])
def test_scalar_constants_are_zero_dimensional(made, literal):
    constant = made()
    assert constant.data.shape == ()
    assert ir.structural_equal(constant, parsed_constant(literal), compare_spans=False)
    typed = sy.transform.InferType()(ir.IRModule.from_expr(ir.Function([], constant)))
    assert typed["main"].body.checked_type == ir.TensorType((), "float32")


def test_integer_and_boolean_scalars_keep_their_dtype():
    assert ir.const(3).data.dtype == np.int32 and ir.const(3).data.shape == ()
    assert ir.const(True).data.dtype == np.bool_ and ir.const(True).data.shape == ()
    assert ir.const(3, "int64").data.dtype == np.int64
    assert ir.const([1, 2]).data.dtype == np.int32


def test_a_python_int_is_the_int32_the_text_3_is():
    # Relay's const(3) is int32 and so is the text's `3`: a Python int must
    # agree with both, or add(int32 x, const(3)) fails type inference.
    assert ir.structural_equal(ir.const(3), parsed_constant("3", "int32"), compare_spans=False)
    x = ir.Var("x", ir.TensorType((2,), "int32"))
    for body in (sy.op.add(x, ir.const(3)), sy.op.add(x, 3)):
        mod = sy.transform.InferType()(ir.IRModule.from_expr(ir.Function([x], body)))
        assert mod["main"].body.checked_type == ir.TensorType((2,), "int32")
        np.testing.assert_array_equal(sy.evaluate(mod, x=np.array([1, 2], np.int32)), [4, 5])


def test_operator_functions_take_python_and_numpy_scalars_as_constants():
    y = ir.Var("y", ir.TensorType((2,), "float32"))
    scaled = sy.op.multiply(y, 2.0)
    assert isinstance(scaled.args[1], ir.Constant) and scaled.args[1].dtype == "float32"
    assert sy.op.multiply(y, np.float16(2)).args[1].dtype == "float16"
    assert sy.op.add(y, True).args[1].dtype == "bool"


@pytest.mark.parametrize("value, dtype", [(2**40, None), ([1, -2**31 - 1], None), (300, "uint8"), (-1, "uint8"),
                                          (2**63, "int64")])
def test_an_integer_outside_its_dtype_is_refused_not_wrapped(value, dtype):
    with pytest.raises(sy.UsageError, match="out of range for (int32|uint8|int64)") as info:
        ir.const(value, dtype)
    if dtype is None:
        assert "dtype=\"int64\"" in str(info.value)
    assert ir.const(2**40, "int64").data == 2**40


@pytest.mark.parametrize("scale", [np.array(2.0, np.float32), np.float32(2.0), 2.0, 2], ids=[
    "numpy-0d", "numpy-scalar", "python-float", "python-int"])
def test_scalar_parameter_fed_to_the_interpreter(scale):
    product, total = sy.evaluate(sy.parse(SCALED), x=X, s=scale)
    np.testing.assert_allclose(product, X * 2)
    assert total.shape == () and total.dtype == np.float32
    assert float(total) == pytest.approx(12.0)


def test_scalar_of_the_wrong_shape_is_named():
    with pytest.raises(sy.UsageError, match="input 's'"):
        sy.evaluate(sy.parse(SCALED), x=X, s=np.ones(1, np.float32))


@pytest.fixture(scope="module")
def scaled_model(tmp_path_factory):
    out = tmp_path_factory.mktemp("scalars") / "artifact"
    sy.build(sy.parse(SCALED), devices=["cpu:0"], output=out)
    return sy.runtime.load(out)


@pytest.mark.parametrize("scale", [np.array(3.0, np.float32), np.float32(3.0), 3.0, 3], ids=[
    "numpy-0d", "numpy-scalar", "python-float", "python-int"])
def test_scalar_parameter_fed_to_a_compiled_model(scaled_model, scale):
    product, total = scaled_model.run(x=X, s=scale)
    np.testing.assert_allclose(product, X * 3)
    assert total.shape == () and float(total) == pytest.approx(18.0)
    scaled_model.set_input("x", X)
    scaled_model.set_input("s", scale)
    scaled_model.run()
    out = np.empty((), np.float32)
    assert scaled_model.get_output(1, out=out) is out
    assert float(out) == pytest.approx(18.0)


def test_compiled_model_refuses_a_scalar_of_the_wrong_shape(scaled_model):
    with pytest.raises(sy.UsageError, match="input 's'"):
        scaled_model.set_input("s", np.ones(1, np.float32))
