# sy.testing.assert_structural_equal: silent when equal, AssertionError with
# structural_diff's first-difference report otherwise; free variables the
# same objects unless map_free_vars; devices and spans compared unless off.
import pytest

import switchyard as sy
from switchyard import ir
from switchyard import transform as T
from switchyard.testing import assert_structural_equal

RELU_OF_SUM = "def @main(%x: Tensor[(2), float32]) { nn.relu(add(%x, %x)) }"


def tensor_var(name):
    return ir.Var(name, ir.TensorType((2,)))


def test_equal_modules_and_functions_pass():
    a, b = sy.parse(RELU_OF_SUM), sy.parse(RELU_OF_SUM)
    assert_structural_equal(a, b)
    assert_structural_equal(a["main"], b["main"])
    sy.testing.assert_structural_equal(T.InferType()(a), T.InferType()(b))


def test_difference_raises_the_first_difference_report():
    a = sy.parse(RELU_OF_SUM)
    b = sy.parse(RELU_OF_SUM.replace("add", "multiply"))
    with pytest.raises(AssertionError) as info:
        assert_structural_equal(a, b)
    report = str(info.value)
    assert "@main.body.args[0].op: operators differ" in report
    assert "lhs: Op add" in report and "rhs: Op multiply" in report
    assert report.endswith(ir.structural_diff(a, b))


def test_a_pass_result_checked_against_the_expected_program():
    @T.function_pass(name="AddToMultiply")
    class AddToMultiply:
        def transform_function(self, func, mod, ctx):
            class Rewrite(ir.ExprMutator):
                def visit_call(self, call):
                    call = super().visit_call(call)
                    return sy.op.multiply(*call.args) if call.op.name == "add" else call

            return Rewrite().visit(func)

    after = AddToMultiply()(sy.parse(RELU_OF_SUM))
    expected = sy.parse(RELU_OF_SUM.replace("add", "multiply"))
    assert_structural_equal(after, expected)
    with pytest.raises(AssertionError, match="spans differ"):
        assert_structural_equal(after, sy.parse(RELU_OF_SUM.replace("add", "multiply"), source_name="other.sy"),
                                compare_spans=True)


def test_free_variables_must_be_the_same_unless_mapped():
    x, y = tensor_var("x"), tensor_var("y")
    assert_structural_equal(sy.op.add(x, x), sy.op.add(x, x))
    with pytest.raises(AssertionError, match="free variable %x of lhs and %y of rhs are different"):
        assert_structural_equal(sy.op.add(x, x), sy.op.add(y, y))
    assert_structural_equal(sy.op.add(x, x), sy.op.add(y, y), map_free_vars=True)
    # Mapped consistently: x -> y cannot also be x -> x.
    with pytest.raises(AssertionError, match="different variables"):
        assert_structural_equal(sy.op.add(x, y), sy.op.add(y, y), map_free_vars=True)
    # Bound variables never need mapping.
    assert_structural_equal(ir.Function([x], sy.op.nn.relu(x)), ir.Function([y], sy.op.nn.relu(y)))


def test_devices_compared_unless_turned_off():
    x = tensor_var("x")
    on_one = sy.op.nn.relu(x, virtual_device="cpu:1")
    with pytest.raises(AssertionError, match="devices differ"):
        assert_structural_equal(on_one, sy.op.nn.relu(x))
    assert_structural_equal(on_one, sy.op.nn.relu(x), compare_devices=False)


def test_an_expression_and_a_module_are_not_comparable():
    with pytest.raises(TypeError):
        assert_structural_equal(sy.parse(RELU_OF_SUM), tensor_var("x"))
