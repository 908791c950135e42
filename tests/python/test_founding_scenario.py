# The scenario Switchyard exists for (CONTEXT.md): passes written in Python
# keep every node's device and span, the invariant checker stays silent on
# them and blames a Python pass that breaks placement by name and source
# location, and the result builds, runs and matches the interpreter and
# NumPy.
import numpy as np
import pytest

import switchyard as sy
from switchyard import ir
from switchyard import transform as T
from conftest import is_call_of, mlp_reference

DEVICES = ["cpu:0", "cpu:1"]


class IdentityMutator(ir.ExprMutator):
    """Rebuilds every call from scratch, stating neither device nor span."""

    def visit_call(self, call):
        return ir.Call(call.op, [self.visit(a) for a in call.args], call.attrs)


@T.function_pass(opt_level=0, name="PythonIdentity")
def python_identity(func, mod, ctx):
    return IdentityMutator().visit(func)


class DenseAddToBiasAdd(ir.ExprMutator):
    def visit_call(self, call):
        call = super().visit_call(call)
        if is_call_of(call, "add") and is_call_of(call.args[0], "nn.dense"):
            return sy.op.nn.bias_add(call.args[0], call.args[1])
        return call


class BiasAddToAdd(ir.ExprMutator):
    def visit_call(self, call):
        call = super().visit_call(call)
        if is_call_of(call, "nn.bias_add"):
            return call.with_fields(op=ir.Op("add"), attrs={})
        return call


@T.function_pass(opt_level=0, name="DenseBiasRewrite")
def dense_bias_rewrite(func, mod, ctx):
    return DenseAddToBiasAdd().visit(func)


@T.function_pass(opt_level=0, name="MoveSecondDense")
def move_second_dense(func, mod, ctx):
    """Deliberately wrong: moves the cpu:1 dense to cpu:0, inserting no copy."""

    class Move(ir.ExprMutator):
        def visit_call(self, call):
            call = super().visit_call(call)
            if is_call_of(call, "nn.dense") and call.virtual_device == ir.VirtualDevice("cpu:1"):
                return call.with_fields(virtual_device="cpu:0")
            return call

    return Move().visit(func)


class PassLog(T.PassInstrument):
    def __init__(self):
        super().__init__()
        self.after = []

    def run_after_pass(self, mod, info):
        self.after.append(info.name)


def calls_in_order(expr):
    calls = []

    class Collect(ir.ExprVisitor):
        def visit_call(self, call):
            calls.append(call)

    Collect().visit(expr)
    return calls


@pytest.fixture
def planned(mlp_path):
    with T.PassContext(check_invariants=True):
        return T.Sequential([T.InferType(), T.PlanDevices(devices=DEVICES)])(sy.parse(mlp_path))


def test_python_passes_keep_devices_and_spans_under_the_checker(mlp_path, planned):
    log = PassLog()
    with T.PassContext(check_invariants=True, instruments=[log]):
        identity = T.Sequential([T.InferType(), T.PlanDevices(devices=DEVICES), python_identity])(sy.parse(mlp_path))
        rewritten = T.Sequential([dense_bias_rewrite, T.InferType()])(identity)
    assert log.after == ["InferType", "PlanDevices", "PythonIdentity", "DenseBiasRewrite", "InferType"]

    # The identity pass rebuilt every call, and every device and span survived.
    assert not identity["main"].body.same_as(planned["main"].body)
    assert ir.structural_equal(identity, planned, compare_spans=True), \
        ir.structural_diff(identity, planned, compare_spans=True)

    # The rewrite replaced exactly the two adds; each bias_add sits on the
    # replaced add's device with its span, and nothing else changed.
    before, after = calls_in_order(planned["main"]), calls_in_order(rewritten["main"])
    assert [c.op.name for c in after] == [
        "nn.bias_add" if is_call_of(c, "add") else c.op.name for c in before]
    for old, new in zip(before, after):
        assert new.virtual_device == old.virtual_device, old
        assert new.span == old.span, old
    bias_adds = [c for c in after if is_call_of(c, "nn.bias_add")]
    assert [str(c.virtual_device) for c in bias_adds] == ["cpu:0", "cpu:1"]
    assert [str(c.span).rsplit("/", 1)[-1] for c in bias_adds] == ["mlp_two_devices.sy:9:8",
                                                                    "mlp_two_devices.sy:13:3"]
    assert [str(p.virtual_device) for p in rewritten["main"].params] == ["cpu:0", "cpu:0", "cpu:0", "cpu:1",
                                                                           "cpu:1"]
    assert str(rewritten["main"].virtual_device) == "cpu:1"
    assert ir.structural_equal(BiasAddToAdd().visit(rewritten), planned, compare_spans=True)
    assert not ir.structural_equal(rewritten, planned)


def test_checker_blames_the_python_pass_that_breaks_placement(planned):
    with T.PassContext(check_invariants=True):
        with pytest.raises(sy.InvariantError) as info:
            T.Sequential([python_identity, move_second_dense, dense_bias_rewrite])(planned)
    error = info.value
    assert "MoveSecondDense" in error.message
    assert "without a device_copy" in error.message
    assert str(error.span).endswith("mlp_two_devices.sy:12:8")
    assert "mlp_two_devices.sy:12:8" in str(error)
    assert "%4 = nn.dense(%3, %w2);" in str(error), "the source line is quoted"


def test_rewritten_module_builds_runs_and_matches(planned, mlp_inputs, tmp_path):
    if not hasattr(sy, "build"):
        pytest.skip("sy.build does not exist yet (no backend)")
    with T.PassContext(check_invariants=True):
        rewritten = T.Sequential([python_identity, dense_bias_rewrite, T.InferType()])(planned)
    reference = mlp_reference(mlp_inputs)
    interpreted = sy.evaluate(rewritten, **mlp_inputs)
    np.testing.assert_allclose(interpreted, reference, rtol=1e-4, atol=1e-4)

    report = sy.build(rewritten, devices=DEVICES, output=tmp_path / "mlp", check_invariants=True)
    assert report.copies == 1
    model = sy.runtime.load(tmp_path / "mlp")
    output = model.run(**mlp_inputs)
    np.testing.assert_allclose(output, interpreted, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(output, reference, rtol=1e-4, atol=1e-4)
    stats = model.last_stats
    assert stats.devices == {"cpu:0", "cpu:1"}
    assert [(c.src, c.dst) for c in stats.copies] == [("cpu:0", "cpu:1")]
