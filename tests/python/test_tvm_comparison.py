# Five passes a TVM user would write, written naively as in TVM: Python
# mutators and constructors, with_fields, no device code and no InferType
# between them. Each builds (to an artifact, run through sy.runtime) and
# matches NumPy; the deliberately wrong one is named by the invariant
# checker with the pass, the node and the source line.
import numpy as np
import pytest

import switchyard as sy
from switchyard import ir
from switchyard import transform as T
from conftest import calls_of, is_call_of, mlp_reference

DEVICES = ["cpu:0", "cpu:1"]


@pytest.fixture
def planned(mlp_path):
    with T.PassContext(check_invariants=True):
        return T.Sequential([T.InferType(), T.PlanDevices(devices=DEVICES)])(sy.parse(mlp_path))


def build_and_run(mod, inputs, tmp_path, name):
    report = sy.build(mod, devices=DEVICES, output=tmp_path / name, check_invariants=True)
    model = sy.runtime.load(tmp_path / name)
    return report, model, model.run(**inputs)


# 1. relu -> maximum(x, 0)
class ReluToMaximum(ir.ExprMutator):
    def visit_call(self, call):
        call = super().visit_call(call)
        if is_call_of(call, "nn.relu"):
            return sy.op.maximum(call.args[0], ir.const(0.0))
        return call


@T.function_pass(name="ReluToMaximum")
def relu_to_maximum(func, mod, ctx):
    return ReluToMaximum().visit(func)


def test_relu_to_maximum_builds_runs_and_matches(planned, mlp_inputs, tmp_path):
    with T.PassContext(check_invariants=True):
        mod = T.Sequential([relu_to_maximum, T.FuseOps()])(planned)
    (maximum,) = calls_of(mod["main"], "maximum")
    # The call took the relu's place and device; its new constant was placed
    # with it (constants are duplicated, never copied).
    assert str(maximum.virtual_device) == "cpu:0"
    assert str(maximum.args[1].virtual_device) == "cpu:0"
    report, model, out = build_and_run(mod, mlp_inputs, tmp_path, "maximum")
    assert report.kernel_calls == 2 and report.copies == 1
    np.testing.assert_allclose(out, mlp_reference(mlp_inputs), rtol=1e-4, atol=1e-4)


# 2. fold x * 1
class FoldMultiplyByOne(ir.ExprMutator):
    def visit_call(self, call):
        call = super().visit_call(call)
        if is_call_of(call, "multiply") and isinstance(call.args[1], ir.Constant) \
                and np.all(call.args[1].data == 1):
            return call.args[0]
        return call


@T.function_pass(name="FoldMultiplyByOne")
def fold_multiply_by_one(func, mod, ctx):
    return FoldMultiplyByOne().visit(func)


def test_fold_multiply_by_one_builds_runs_and_matches(tmp_path):
    mod = sy.parse("def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {\n"
                   "  %0 = multiply(%x, 1f);\n"
                   "  %1 = add(%0, %y);\n"
                   "  multiply(%1, 1f)\n"
                   "}\n", source_name="fold.sy")
    with T.PassContext(check_invariants=True):
        mod = T.Sequential([T.InferType(), T.PlanDevices(devices=DEVICES), fold_multiply_by_one])(mod)
    assert not calls_of(mod["main"], "multiply")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.full((2, 3), 0.5, np.float32)
    report, model, out = build_and_run(mod, {"x": x, "y": y}, tmp_path, "fold")
    assert report.kernel_calls == 1
    np.testing.assert_array_equal(out, x + y)


# 3. a function rebuilt with a new parameter list
@T.function_pass(name="AddOutputBias")
def add_output_bias(func, mod, ctx):
    """As in TVM: relay.Function(params + [bias], add(body, bias))."""
    bias = ir.Var("out_bias", ir.TensorType((1, 10)))
    return ir.Function(list(func.params) + [bias], sy.op.add(func.body, bias))


def test_a_function_with_a_new_parameter_builds_runs_and_matches(planned, mlp_inputs, tmp_path):
    with T.PassContext(check_invariants=True):
        mod = T.Sequential([add_output_bias, T.FuseOps()])(planned)
    params = mod["main"].params
    assert [p.name_hint for p in params][-1] == "out_bias"
    # The new parameter is placed where its one consumer runs, so it crosses nothing.
    assert str(params[-1].virtual_device) == "cpu:1"
    bias = np.linspace(-1, 1, 10, dtype=np.float32).reshape(1, 10)
    report, model, out = build_and_run(mod, dict(mlp_inputs, out_bias=bias), tmp_path, "bias")
    assert report.copies == 1
    np.testing.assert_allclose(out, mlp_reference(mlp_inputs) + bias, rtol=1e-4, atol=1e-4)


# 4. the cast round trip across a copy
class CastRoundTrip(ir.ExprMutator):
    """float16 on the wire: cast before each device_copy, cast back after."""

    def visit_call(self, call):
        call = super().visit_call(call)
        if is_call_of(call, "device_copy"):
            down = sy.op.cast(call.args[0], dtype="float16")
            moved = sy.op.device_copy(down, src=call.attrs["src"], dst=call.attrs["dst"])
            return sy.op.cast(moved, dtype="float32")
        return call


@T.function_pass(name="CastRoundTrip")
def cast_round_trip(func, mod, ctx):
    return CastRoundTrip().visit(func)


def test_the_cast_round_trip_halves_the_copy_and_matches(planned, mlp_inputs, tmp_path):
    with T.PassContext(check_invariants=True):
        mod = T.Sequential([cast_round_trip, T.FuseOps()])(planned)
    by_dtype = {c.attrs["dtype"]: c for c in calls_of(mod["main"], "cast")}
    assert str(by_dtype["float16"].virtual_device) == "cpu:0"  # where its input lives
    assert str(by_dtype["float32"].virtual_device) == "cpu:1"  # the replaced copy's device
    report, model, out = build_and_run(mod, mlp_inputs, tmp_path, "cast")
    assert [(c.src, c.dst, c.bytes) for c in model.last_stats.copies] == [("cpu:0", "cpu:1", 512 * 2)]
    hidden = np.maximum(mlp_inputs["x"] @ mlp_inputs["w1"].T + mlp_inputs["b1"], 0).astype(np.float16)
    expected = hidden.astype(np.float32) @ mlp_inputs["w2"].T + mlp_inputs["b2"]
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out, mlp_reference(mlp_inputs), rtol=2e-2, atol=2e-2)


# 5. a deliberately wrong device
class WrongDevice(ir.ExprMutator):
    """Puts the first layer's relu on cpu:1 while its input stays on cpu:0."""

    def visit_call(self, call):
        call = super().visit_call(call)
        if is_call_of(call, "nn.relu"):
            return call.with_fields(virtual_device="cpu:1")
        return call


@T.function_pass(name="WrongDevice")
def wrong_device(func, mod, ctx):
    return WrongDevice().visit(func)


def test_a_wrong_device_is_named_with_pass_node_and_line(planned):
    with T.PassContext(check_invariants=True):
        with pytest.raises(sy.InvariantError) as info:
            T.Sequential([wrong_device, T.FuseOps()])(planned)
    error = info.value
    assert "after pass 'WrongDevice'" in error.message
    assert "argument 0 of 'nn.relu' lives on cpu:0 but is consumed on cpu:1 without a device_copy" in error.message
    assert "node: nn.relu(add(...)) @cpu:1" in error.message
    assert str(error.span).endswith("mlp_two_devices.sy:10:8")
    assert "%2 = nn.relu(%1);" in str(error), "the source line is quoted"
