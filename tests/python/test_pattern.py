# sy.pattern: building patterns, matching (consistent bindings, alternatives,
# attribute and type constraints), refused patterns, and rewrite() with
# DFPatternCallback classes whose replacements keep devices and spans and
# still build and run.
import numpy as np
import pytest

import switchyard as sy
from switchyard import ir
from switchyard import transform as T
from switchyard.pattern import DFPatternCallback, is_constant, is_op, is_tuple, is_var, match, rewrite, wildcard

MLP_DEVICES = ["cpu:0", "cpu:1"]


def calls_of(expr, name):
    class Calls(ir.ExprVisitor):
        def __init__(self):
            super().__init__()
            self.found = []

        def visit_call(self, call):
            if isinstance(call.op, ir.Op) and call.op.name == name:
                self.found.append(call)

    calls = Calls()
    calls.visit(expr)
    return calls.found


def test_call_patterns_match_operator_and_operands():
    x = ir.Var("x", ir.TensorType((2, 3)))
    expr = sy.op.add(sy.op.nn.relu(x), ir.const(1.0))
    assert match(is_op("add")(is_op("nn.relu")(wildcard()), is_constant()), expr)
    assert is_op("add")(wildcard(), wildcard()).match(expr)
    assert not match(is_op("add")(is_constant(), wildcard()), expr)
    assert not match(is_op("multiply")(wildcard(), wildcard()), expr)
    assert not match(is_op("add")(wildcard()), expr), "arity counts"
    assert match(is_op("add")(is_op("nn.relu")(is_var("x")), wildcard()), expr)
    assert not match(is_op("add")(is_op("nn.relu")(is_var("y")), wildcard()), expr)
    assert match(is_tuple([is_var(), is_constant()]), ir.Tuple([x, ir.const(0.0)]))


def test_the_same_pattern_object_matches_one_expression():
    x, y = ir.Var("x", ir.TensorType((2,))), ir.Var("y", ir.TensorType((2,)))
    same = wildcard()
    assert match(is_op("add")(same, same), sy.op.add(x, x))
    assert not match(is_op("add")(same, same), sy.op.add(x, y))


def test_alternatives_attributes_and_types():
    x = ir.Var("x", ir.TensorType((2, 3)))
    i = ir.Var("i", ir.TensorType((2, 3), "int32"))
    activation = is_op("nn.relu")(wildcard()) | is_op("sigmoid")(wildcard())
    assert match(activation, sy.op.sigmoid(x))
    assert not match(activation, sy.op.tanh(x))
    summed = sy.op.sum(x, axis=[1])
    assert match(is_op("sum")(wildcard()).has_attr({"axis": [1]}), summed)
    assert not match(is_op("sum")(wildcard()).has_attr({"axis": [0]}), summed)
    relu6 = sy.op.clip(x, a_min=0.0, a_max=6.0)
    assert match(is_op("clip")(wildcard()).has_attr({"a_min": 0, "a_max": 6}), relu6), "numbers by value"
    assert not match(is_op("clip")(wildcard()).has_attr({"a_max": 1}), relu6)
    float_relu = is_op("nn.relu")(wildcard()).has_dtype("float32")
    typed = T.InferType()(ir.IRModule.from_expr(ir.Function([x, i], ir.Tuple([sy.op.nn.relu(x), sy.op.nn.relu(i)]))))
    fields = typed["main"].body.fields
    assert match(float_relu, fields[0]) and not match(float_relu, fields[1])
    assert match(is_op("nn.relu")(wildcard()).has_shape((2, 3)), fields[1])
    assert not match(is_op("nn.relu")(wildcard()).has_shape([3, 2]), fields[1])
    assert match(wildcard().has_type(ir.TensorType((2, 3), "int32")), fields[1])
    assert not match(wildcard().has_type(ir.TensorType((2, 3), "float32")), fields[1])
    assert match(wildcard().has_dtype("int32"), i), "a Var's annotation is its type before InferType"
    assert not match(float_relu, sy.op.nn.relu(x)), "an untyped call matches no type constraint"


def test_patterns_print_as_written():
    p = (is_op("nn.relu")(wildcard()) | is_constant()).has_dtype("float32")
    assert repr(p) == '(is_op("nn.relu")(wildcard()) | is_constant()).has_dtype("float32")'


def test_patterns_that_could_never_match_are_refused():
    with pytest.raises(sy.UsageError, match=r"is_op: unknown operator 'nn.rlu'; did you mean 'nn.relu'"):
        is_op("nn.rlu")
    with pytest.raises(sy.UsageError, match="operator 'sum' has no attribute 'axes'"):
        is_op("sum")(wildcard()).has_attr({"axes": [1]})
    with pytest.raises(sy.UsageError, match="unknown dtype 'flaot32'"):
        wildcard().has_dtype("flaot32")
    with pytest.raises(TypeError, match="argument\\[0\\] must be a Pattern"):
        is_op("nn.relu")(ir.Var("x"))
    with pytest.raises(TypeError, match="has_type\\(\\) takes a TensorType, got TupleType"):
        wildcard().has_type(ir.TupleType([]))
    with pytest.raises(TypeError, match="has_shape\\(\\) dimensions must be ints"):
        wildcard().has_shape((2, "3"))


class ReluToMaximum(DFPatternCallback):
    """The TVM comparison's first pass: relu(x) -> maximum(x, 0), written naively."""

    def __init__(self):
        super().__init__()
        self.x = wildcard()
        self.pattern = is_op("nn.relu")(self.x)

    def callback(self, pre, post, node_map):
        return sy.op.maximum(node_map[self.x][0], ir.const(0.0))


def test_rewrite_keeps_devices_and_spans_and_the_model_still_runs(mlp_path, mlp_inputs, tmp_path):
    planned = T.Sequential([T.InferType(), T.PlanDevices(devices=MLP_DEVICES)])(sy.parse(mlp_path))
    (relu,) = calls_of(planned["main"], "nn.relu")
    rewritten = rewrite(ReluToMaximum(), planned)
    assert not calls_of(rewritten["main"], "nn.relu")
    (maximum,) = calls_of(rewritten["main"], "maximum")
    assert maximum.virtual_device == relu.virtual_device
    assert maximum.span == relu.span
    # The new constant, stating no device, is placed by the re-plan after the rewrite.
    assert maximum.args[1].virtual_device == relu.virtual_device, "the new constant too"
    with T.PassContext(check_invariants=True):
        typed = T.InferType()(rewritten)
    expected = sy.evaluate(planned, **mlp_inputs)
    np.testing.assert_allclose(sy.evaluate(typed, **mlp_inputs), expected, rtol=1e-5, atol=1e-5)
    sy.build(typed, devices=MLP_DEVICES, output=tmp_path / "out")
    np.testing.assert_allclose(sy.runtime.load(tmp_path / "out").run(**mlp_inputs), expected, rtol=1e-4, atol=1e-4)


def test_rewrite_of_an_expression_repeats_until_nothing_changes():
    class DoubleNegation(DFPatternCallback):
        def __init__(self):
            super().__init__()
            self.x = wildcard()
            self.pattern = is_op("negative")(is_op("negative")(self.x))

        def callback(self, pre, post, node_map):
            assert pre.op.name == "negative" and post.op.name == "negative"
            return node_map[self.x][0]

    x = ir.Var("x", ir.TensorType((2,)))
    expr = sy.op.negative(sy.op.negative(sy.op.negative(sy.op.negative(x))))
    assert rewrite([DoubleNegation()], expr) == x
    assert DoubleNegation().rewrite(sy.op.exp(expr)).args[0] == x


def test_require_type_infers_types_before_matching():
    class FloatReluOnly(ReluToMaximum):
        def __init__(self, require_type):
            super().__init__()
            self.require_type = require_type
            self.pattern = self.pattern.has_dtype("float32")

    x = ir.Var("x", ir.TensorType((2,)))
    fn = ir.Function([x], sy.op.nn.relu(x))
    assert calls_of(rewrite(FloatReluOnly(False), fn), "nn.relu"), "untyped: no match"
    assert not calls_of(rewrite(FloatReluOnly(True), fn), "nn.relu")


def test_bad_callbacks_are_named():
    class Forgets(ReluToMaximum):
        def callback(self, pre, post, node_map):
            sy.op.maximum(node_map[self.x][0], ir.const(0.0))

    class NoPattern(DFPatternCallback):
        def callback(self, pre, post, node_map):
            return post

    class Again(ReluToMaximum):
        def callback(self, pre, post, node_map):
            return sy.op.nn.relu(node_map[self.x][0])

    x = ir.Var("x", ir.TensorType((2,)))
    with pytest.raises(TypeError, match=r"Forgets.callback must return an Expr \(post, to keep .*\), got NoneType"):
        rewrite(Forgets(), sy.op.nn.relu(x))
    with pytest.raises(TypeError, match=r"NoPattern.pattern \(set in __init__\) must be a Pattern"):
        rewrite(NoPattern(), x)
    with pytest.raises(sy.UsageError, match=r'rewrite did not settle.*is_op\("nn.relu"\)\(wildcard\(\)\)'):
        rewrite(Again(), sy.op.nn.relu(x))
    once = Again()
    once.rewrite_once = True
    assert len(calls_of(rewrite(once, sy.op.nn.relu(x)), "nn.relu")) == 1


def test_a_rewrite_whose_result_matches_again_stops_at_the_round_limit():
    # relu(x) -> relu(relu(x)) doubles the relus each round, so the hundredth
    # round, where the error was, never came. Past 100 rounds' worth of
    # replacements it stops; the counter turns a runaway into a failure.
    class Doubles(ReluToMaximum):
        calls = 0

        def callback(self, pre, post, node_map):
            Doubles.calls += 1
            if Doubles.calls > 20000:
                raise AssertionError("the rewrite ran away")
            return sy.op.nn.relu(post)

    x = ir.Var("x", ir.TensorType((2,)))
    with pytest.raises(sy.UsageError) as info:
        rewrite(Doubles(), ir.Function([x], sy.op.nn.relu(x)))
    message = info.value.message
    assert "Doubles" in message and 'is_op("nn.relu")(wildcard())' in message, message
    assert "100 rounds" in message, message
    assert Doubles.calls <= 1000
