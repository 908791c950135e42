# ExprVisitor and ExprMutator subclassed in Python: dispatch to visit_*,
# post-order with children done first, placement inheritance for
# replacements, and chains far deeper than Python's recursion limit.
import sys

import numpy as np
import pytest

import switchyard as sy
from switchyard import ir


def relu_chain(length):
    x = ir.Var("x", ir.TensorType((4,)))
    body = x
    for i in range(length):
        body = sy.op.nn.relu(body, virtual_device="cpu:0", span=ir.Span("chain.sy", i + 1, 3))
    return ir.Function([x], body, virtual_device="cpu:0")


def every_kind_function():
    x = ir.Var("x", ir.TensorType((2,)), virtual_device="cpu:0", span=ir.Span("k.sy", 1, 1))
    y = ir.Var("y", ir.TensorType((2,)), virtual_device="cpu:0", span=ir.Span("k.sy", 2, 1))
    pair = ir.Tuple([x, ir.const(np.ones(2, np.float32))], virtual_device="cpu:0", span=ir.Span("k.sy", 3, 1))
    item = ir.TupleGetItem(pair, 1, virtual_device="cpu:0", span=ir.Span("k.sy", 4, 1))
    call = sy.op.add(item, y, virtual_device="cpu:0", span=ir.Span("k.sy", 5, 1))
    branch = ir.If(ir.const(True), call, y, virtual_device="cpu:0", span=ir.Span("k.sy", 6, 1))
    let = ir.Let(y, sy.op.negative(x), branch, virtual_device="cpu:0", span=ir.Span("k.sy", 7, 1))
    inner = ir.Function([x], let, virtual_device="cpu:0", span=ir.Span("k.sy", 8, 1))
    return ir.Function([x], ir.Call(ir.GlobalVar("helper"), [x]), span=ir.Span("k.sy", 9, 1)), inner


class Recorder(ir.ExprVisitor):
    def __init__(self):
        super().__init__()
        self.seen = []

    def visit_var(self, node): self.seen.append(("var", node.name_hint))
    def visit_constant(self, node): self.seen.append(("constant", node.dtype))
    def visit_call(self, node): self.seen.append(("call", node.op.kind))
    def visit_function(self, node): self.seen.append(("function", len(node.params)))
    def visit_let(self, node): self.seen.append(("let", node.var.name_hint))
    def visit_if(self, node): self.seen.append(("if", None))
    def visit_tuple(self, node): self.seen.append(("tuple", len(node.fields)))
    def visit_tuple_getitem(self, node): self.seen.append(("tuple_getitem", node.index))
    def visit_global_var(self, node): self.seen.append(("global_var", node.name))
    def visit_op(self, node): self.seen.append(("op", node.name))


def test_visitor_dispatches_every_kind_post_order():
    outer, inner = every_kind_function()
    recorder = Recorder()
    recorder.visit(inner)
    kinds = [k for k, _ in recorder.seen]
    assert set(kinds) == {"var", "constant", "call", "function", "let", "if", "tuple", "tuple_getitem", "op"}
    assert kinds[-1] == "function", "the root comes last"
    assert kinds.index("tuple") < kinds.index("tuple_getitem") < kinds.index("if") < kinds.index("let")
    recorder.visit(outer)
    assert ("global_var", "helper") in recorder.seen
    assert recorder.seen.count(("function", 1)) == 2, "each node is visited once"


def test_visitor_defaults_and_module():
    mod = ir.IRModule.from_expr(relu_chain(5))
    counter = ir.ExprVisitor()
    counter.visit(mod)

    class Calls(ir.ExprVisitor):
        count = 0

        def visit_call(self, node):
            self.count += 1
            super().visit_call(node)

    calls = Calls()
    calls.visit(mod)
    assert calls.count == 5


class Identity(ir.ExprMutator):
    pass


class IdentityThroughPython(ir.ExprMutator):
    def visit_call(self, call):
        return super().visit_call(call)

    def visit_function(self, fn):
        return super().visit_function(fn)


class RebuildFromScratch(ir.ExprMutator):
    """Rebuilds every call with the plain constructor, stating no device or span."""

    def visit_call(self, call):
        return ir.Call(call.op, [self.visit(a) for a in call.args], call.attrs)


@pytest.mark.parametrize("mutator", [Identity, IdentityThroughPython, RebuildFromScratch])
def test_identity_mutators_keep_every_device_and_span(mutator):
    for fn in [every_kind_function()[1], relu_chain(20)]:
        result = mutator().visit(fn)
        assert ir.structural_equal(result, fn, compare_spans=True), ir.structural_diff(result, fn, compare_spans=True)


def test_rebuilt_nodes_inherit_device_and_span():
    fn = relu_chain(3)
    result = RebuildFromScratch().visit(fn)
    assert not result.body.same_as(fn.body)
    assert str(result.body.virtual_device) == "cpu:0"
    assert str(result.body.span) == "chain.sy:3:3"
    assert str(result.body.args[0].span) == "chain.sy:2:3"


def test_replacing_one_call_keeps_everything_else():
    x = ir.Var("x", ir.TensorType((4,)))
    first = sy.op.nn.relu(x, virtual_device="cpu:0", span=ir.Span("m.sy", 1, 1))
    second = sy.op.negative(first, virtual_device="cpu:1", span=ir.Span("m.sy", 2, 1))
    third = sy.op.nn.relu(second, virtual_device="cpu:1", span=ir.Span("m.sy", 3, 1))
    fn = ir.Function([x], third, virtual_device="cpu:1")

    class SwapNegative(ir.ExprMutator):
        def visit_call(self, call):
            if call.op.name == "negative":
                # A new node stating neither device nor span.
                return sy.op.sigmoid(self.visit(call.args[0]))
            return super().visit_call(call)

    result = SwapNegative().visit(fn)
    replaced = result.body.args[0]
    assert replaced.op.name == "sigmoid"
    assert str(replaced.virtual_device) == "cpu:1" and str(replaced.span) == "m.sy:2:1"
    assert replaced.args[0].same_as(first), "untouched nodes are kept"
    assert str(result.body.span) == "m.sy:3:1"
    back = SwapBack().visit(result)
    assert ir.structural_equal(back, fn, compare_spans=True)


class SwapBack(ir.ExprMutator):
    def visit_call(self, call):
        call = super().visit_call(call)
        if call.op.name == "sigmoid":
            return call.with_fields(op=ir.Op("negative"))
        return call


def test_visit_inside_visit_is_a_lookup():
    fn = relu_chain(4)
    seen = []

    class Check(ir.ExprMutator):
        def visit_call(self, call):
            child = self.visit(call.args[0])
            seen.append(child.kind)
            return super().visit_call(call)

    assert Check().visit(fn).same_as(fn)
    assert seen == ["Var", "Call", "Call", "Call"]


def test_mutating_a_module():
    mod = ir.IRModule.from_expr(relu_chain(3))
    mod.devices = ["cpu:0"]
    result = IdentityThroughPython().visit(mod)
    assert isinstance(result, ir.IRModule)
    assert ir.structural_equal(result, mod, compare_spans=True) and [str(d) for d in result.devices] == ["cpu:0"]


def test_deep_chain_under_default_recursion_limit():
    assert sys.getrecursionlimit() <= 10000
    depth = 100_000
    fn = relu_chain(depth)

    class CountCalls(ir.ExprMutator):
        count = 0

        def visit_call(self, call):
            self.count += 1
            return super().visit_call(call)

    counter = CountCalls()
    assert counter.visit(fn).same_as(fn)
    assert counter.count == depth
    rebuilt = RebuildFromScratch().visit(fn)
    assert not rebuilt.same_as(fn)
    assert ir.structural_equal(rebuilt, fn, compare_spans=True)

    class Visits(ir.ExprVisitor):
        count = 0

        def visit_call(self, call):
            self.count += 1

    visits = Visits()
    visits.visit(rebuilt)
    assert visits.count == depth
    assert str(rebuilt).count("nn.relu") == depth


def test_mutator_memo_survives_dropped_inputs():
    mutator = IdentityThroughPython()
    for _ in range(50):
        fn = relu_chain(3)
        assert mutator.visit(fn).same_as(fn)


def test_overrides_on_the_instance_and_direct_visit_calls():
    fn = relu_chain(3)
    seen = []

    class Plain(ir.ExprMutator):
        pass

    mutator = Plain()
    mutator.visit_call = lambda call: seen.append(call.op.name) or call
    assert mutator.visit(fn).same_as(fn)
    assert seen == ["nn.relu"] * 3

    class Recursive(ir.ExprMutator):
        def visit_call(self, call):
            seen.append(call.op.name)
            self.visit(call.args[0])
            return call

    seen.clear()
    # Called directly, its own self.visit still dispatches to the override.
    Recursive().visit_call(fn.body)
    assert seen == ["nn.relu"] * 3
