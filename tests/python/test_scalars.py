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
    assert ir.const(3).data.dtype == np.int64 and ir.const(3).data.shape == ()
    assert ir.const(True).data.dtype == np.bool_ and ir.const(True).data.shape == ()
    assert ir.const(3, "int32").data.dtype == np.int32


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
