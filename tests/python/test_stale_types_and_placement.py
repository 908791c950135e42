# Types never stale and inserted nodes placed: with_fields recomputes or
# clears a rebuilt node's type, InferType runs again before the next pass
# that needs types, the checker names a pass leaving a stale type or
# dropping Primitive, and nodes a Python pass inserts after planning are
# placed by an incremental re-plan with every other placement kept.
import numpy as np
import pytest

import switchyard as sy
from switchyard import ir
from switchyard import transform as T
from conftest import calls_of, is_call_of

DEVICES = ["cpu:0", "cpu:1"]


def kernel_calls(fn):
    count = [0]

    class Count(ir.ExprVisitor):
        def visit_call(self, call):
            if isinstance(call.op, ir.Function) and (call.op.attrs or {}).get("Primitive"):
                count[0] += 1

    Count().visit(fn)
    return count[0]


@pytest.fixture
def planned(mlp_path):
    return T.Sequential([T.InferType(), T.PlanDevices(devices=DEVICES)])(sy.parse(mlp_path))


class ReluToMaximum(ir.ExprMutator):
    def visit_call(self, call):
        call = super().visit_call(call)
        if is_call_of(call, "nn.relu"):
            return sy.op.maximum(call.args[0], ir.const(0.0))
        return call


@T.function_pass(name="NaiveReluToMaximum")
def relu_to_maximum(func, mod, ctx):
    return ReluToMaximum().visit(func)


def test_with_fields_recomputes_the_type_from_the_new_arguments():
    mod = T.InferType()(sy.parse("def @main(%x: Tensor[(2), float32], %y: Tensor[(3, 4), float32]) {\n"
                                 "  add(%x, %x)\n}\n"))
    call, y = mod["main"].body, mod["main"].params[1]
    assert call.checked_type == ir.TensorType((2,))
    assert call.with_fields(args=[y, y]).checked_type == ir.TensorType((3, 4))
    # A new, untyped argument, or arguments that do not fit: no type rather than a stale one.
    assert call.with_fields(args=[sy.op.negative(y), y]).checked_type is None
    assert call.with_fields(args=[call.args[0], y]).checked_type is None
    # Unchanged types keep the node's type; a changed operator takes its relation.
    assert call.with_fields(op=ir.Op("subtract")).checked_type == ir.TensorType((2,))


def test_a_naive_pass_untypes_its_function_and_planning_still_works(mlp_path):
    mod = T.InferType()(sy.parse(mlp_path))
    rewritten = relu_to_maximum(mod)
    assert rewritten["main"].checked_type is None
    # InferType ran before; the pass untyped nodes; it runs again on demand.
    with T.PassContext(check_invariants=True):
        planned = T.Sequential([T.InferType(), relu_to_maximum, T.PlanDevices(devices=DEVICES)])(sy.parse(mlp_path))
    assert planned.device_planned and planned["main"].checked_type is not None


def test_fusion_after_a_naive_pass_is_as_good_as_before(planned):
    with T.PassContext(check_invariants=True):
        fused = T.Sequential([relu_to_maximum, T.FuseOps()])(planned)
        reference = T.FuseOps()(planned)
    assert kernel_calls(fused["main"]) == kernel_calls(reference["main"]) == 2


def test_the_checker_names_a_pass_that_leaves_a_stale_type(planned):
    @T.function_pass(name="StaleRelu")
    def stale(func, mod, ctx):
        class Stale(ir.ExprMutator):
            def visit_call(self, call):
                call = super().visit_call(call)
                if is_call_of(call, "nn.relu"):
                    return call.with_fields(checked_type=ir.TensorType((1, 7)))
                return call
        return Stale().visit(func)

    with T.PassContext(check_invariants=True):
        with pytest.raises(sy.InvariantError) as info:
            T.Sequential([stale])(planned)
    message = info.value.message
    assert "after pass 'StaleRelu': the node's checked type Tensor[(1, 7), float32] is stale: " \
           "its operands give Tensor[(1, 512), float32]" in message
    assert str(info.value.span).endswith("mlp_two_devices.sy:10:8")


def test_the_checker_names_the_pass_that_drops_primitive_not_fuse_ops(planned):
    @T.function_pass(name="RebuildFunctions")
    def rebuild(func, mod, ctx):
        class Rebuild(ir.ExprMutator):
            def visit_function(self, fn):
                # As relay.Function(fn.params, fn.body): the attributes are lost.
                return ir.Function(fn.params, self.visit(fn.body))
        return Rebuild().visit(func)

    with T.PassContext(check_invariants=True):
        with pytest.raises(sy.InvariantError) as info:
            T.Sequential([T.FuseOps(), rebuild])(planned)
    assert "after pass 'RebuildFunctions': a fused function lost its 'Primitive' attribute" in info.value.message


class CastRoundTrip(ir.ExprMutator):
    def visit_call(self, call):
        call = super().visit_call(call)
        if is_call_of(call, "device_copy"):
            down = sy.op.cast(call.args[0], dtype="float16")
            moved = sy.op.device_copy(down, src=call.attrs["src"], dst=call.attrs["dst"])
            return sy.op.cast(moved, dtype="float32")
        return call


def casts(fn):
    return calls_of(fn, "cast")


def test_a_mutator_places_only_the_replacement_and_the_pass_places_the_rest(planned):
    # Outside a pass the nodes inside the replacement are left unplaced ...
    rewritten = CastRoundTrip().visit(planned["main"])
    down, up = casts(rewritten)
    assert down.virtual_device.is_fully_unconstrained
    assert str(up.virtual_device) == "cpu:1" and up.span == planned["main"].body.args[0].args[0].span
    assert down.span == up.span  # spans go to every new node

    @T.function_pass(name="CastRoundTrip")
    def cast_round_trip(func, mod, ctx):
        return CastRoundTrip().visit(func)

    # ... and a pass, inside a context or not, has them placed after it ran.
    for placed in (cast_round_trip(planned), T.Sequential([cast_round_trip])(planned)):
        down, up = casts(placed["main"])
        assert str(down.virtual_device) == "cpu:0" and str(up.virtual_device) == "cpu:1"
        copy = up.args[0]
        assert is_call_of(copy, "device_copy") and copy.checked_type == ir.TensorType((1, 512), "float16")
        # Every node that was placed before keeps its device and identity.
        assert placed["main"].params[0].same_as(planned["main"].params[0])
        T.InvariantChecker().check(placed, "CastRoundTrip")


def test_an_inserted_node_goes_where_the_fewest_bytes_cross(planned, mlp_inputs):
    # A new sum of the first layer's activations (512 floats on cpu:0) added
    # to the result (on cpu:1): summing on cpu:0 copies 4 bytes, on cpu:1 it
    # would copy 2048, so the re-plan puts it on cpu:0 and inserts that copy.
    @T.function_pass(name="AddHiddenSum")
    def add_hidden_sum(func, mod, ctx):
        (relu,) = calls_of(func, "nn.relu")
        total = sy.op.sum(relu, axis=[1], keepdims=True)
        return func.with_fields(body=sy.op.add(func.body, total))

    with T.PassContext(check_invariants=True):
        placed = add_hidden_sum(planned)
    (total,) = calls_of(placed["main"], "sum")
    assert str(total.virtual_device) == "cpu:0"
    copies = calls_of(placed["main"], "device_copy")
    assert sorted(c.checked_type.shape for c in copies) == [(1, 1), (1, 512)]
    assert str(placed["main"].body.virtual_device) == "cpu:1"
    hidden = np.maximum(mlp_inputs["x"] @ mlp_inputs["w1"].T + mlp_inputs["b1"], 0)
    np.testing.assert_allclose(sy.evaluate(placed, **mlp_inputs),
                               sy.evaluate(planned, **mlp_inputs) + hidden.sum(axis=1, keepdims=True), rtol=1e-4)
