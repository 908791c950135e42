# Passes from Python: the built-in passes, Sequential, PassContext (opt
# level, disabled/enabled passes, config, instruments), Python instruments,
# and passes written in Python with function_pass / module_pass.
import numpy as np
import pytest

import switchyard as sy
from switchyard import ir
from switchyard import transform as T

BUILTIN = ["InferType", "SimplifyExpr", "FoldConstant", "EliminateCommonSubexpr", "DeadCodeElimination",
           "FuseOps", "ToANormalForm", "ToGraphNormalForm", "Inline"]


def small_module():
    return sy.parse(
        "def @main(%x: Tensor[(2, 3), float32] @cpu:0) -> Tensor[(2, 3), float32] {\n"
        "  %0 = multiply(%x, 1f);\n"
        "  %1 = add(%0, 0f);\n"
        "  nn.relu(%1)\n"
        "}\n", source_name="small.sy")


def test_every_builtin_pass_runs_on_a_module():
    mod = T.InferType()(small_module())
    inputs = {"x": np.arange(6, dtype=np.float32).reshape(2, 3) - 3}
    expected = sy.evaluate(mod, **inputs)
    for name in BUILTIN:
        p = getattr(T, name)()
        assert isinstance(p, T.Pass) and p.name == name
        out = T.InferType()(p(mod))
        assert isinstance(out, ir.IRModule)
        np.testing.assert_allclose(sy.evaluate(out, **inputs), expected)
    assert set(BUILTIN) <= set(T.pass_names())


def test_simplify_expr_removes_identities():
    text = small_module().astext().replace(" @cpu:0", "")
    mod = T.Sequential([T.InferType(), T.SimplifyExpr()])(sy.parse(text, source_name="small.sy"))
    assert mod["main"].body.args[0].kind == "Var"
    assert str(mod["main"].body.span).startswith("small.sy:")


def test_plan_devices_with_rules(mlp_path):
    planned = T.Sequential([T.InferType(), T.PlanDevices(devices=["cpu:0", "cpu:1"], place=["op:nn.relu=cpu:1"])])(
        sy.parse(mlp_path))
    assert planned.device_planned
    relu = planned["main"].body.args[0].args[0]
    while relu.op.name != "nn.relu":
        relu = relu.args[0]
    assert str(relu.virtual_device) == "cpu:1"
    with pytest.raises(sy.UsageError):
        T.PlanDevices(devices=["cpu:0"], place=["op:nn.relu=cpu:7"])
    # A module not yet typed gets InferType on demand before planning.
    assert T.Sequential([T.PlanDevices(devices=["cpu:0", "cpu:1"])])(sy.parse(mlp_path).copy()).device_planned


def test_sequential_and_pass_info():
    seq = T.Sequential([T.InferType(), T.SimplifyExpr()], name="Cleanup")
    assert seq.name == "Cleanup" and [c.name for c in seq.children] == ["InferType", "SimplifyExpr"]
    assert seq.info.name == "Cleanup"
    assert T.InferType().opt_level == 0


class Recorder(T.PassInstrument):
    def __init__(self):
        super().__init__()
        self.events = []

    def enter_context(self):
        self.events.append("enter")

    def exit_context(self):
        self.events.append("exit")

    def run_before_pass(self, mod, info):
        self.events.append("before " + info.name)

    def run_after_pass(self, mod, info):
        assert isinstance(mod, ir.IRModule)
        self.events.append("after " + info.name)


def test_pass_context_options_and_python_instruments():
    recorder = Recorder()
    timing = T.Timing()
    ctx = T.PassContext(opt_level=1, instruments=[recorder, timing], disabled_passes=["SimplifyExpr"],
                        enabled_passes=["FuseOps"], config={"answer": 42, "name": "x"})
    assert ctx.opt_level == 1 and ctx.disabled_passes == ["SimplifyExpr"] and ctx.enabled_passes == ["FuseOps"]
    assert ctx.config == {"answer": 42, "name": "x"} and ctx.check_invariants
    assert ctx.instruments[0] is recorder
    with ctx:
        assert T.PassContext.current().opt_level == 1
        T.Sequential([T.InferType(), T.SimplifyExpr()])(small_module())
    assert T.PassContext.current().opt_level == 2
    assert recorder.events == ["enter", "before InferType", "after InferType", "exit"]
    assert [name for name, _ in timing.entries] == ["InferType"]
    assert "InferType" in timing.report() and "total" in timing.report()


def test_opt_level_skips_passes_unless_enabled():
    @T.module_pass(opt_level=3, name="Marker")
    def marker(mod, ctx):
        mod = mod.copy()
        mod["marked"] = mod["main"]
        return mod

    with T.PassContext(opt_level=2):
        assert "marked" not in marker(small_module())
    with T.PassContext(opt_level=2, enabled_passes=["Marker"]):
        assert "marked" in marker(small_module())
    with T.PassContext(opt_level=3, disabled_passes=["Marker"]):
        assert "marked" not in marker(small_module())


def test_function_pass_decorator_on_function_and_class():
    seen = []

    @T.function_pass(opt_level=0, name="Negate")
    def negate(func, mod, ctx):
        seen.append((func.kind, isinstance(mod, ir.IRModule), ctx.opt_level))
        return func.with_fields(body=sy.op.negative(func.body))

    assert isinstance(negate, T.Pass) and negate.name == "Negate"
    with T.PassContext(opt_level=2):
        out = T.Sequential([T.InferType(), negate])(small_module())
    assert seen == [("Function", True, 2)]
    assert out["main"].body.op.name == "negative"
    assert str(out["main"].params[0].virtual_device) == "cpu:0"

    @T.function_pass(opt_level=1)
    class Replace:
        """Replaces each function's body by a constant-free copy."""

        def __init__(self, op_name):
            self.op_name = op_name

        def transform_function(self, func, mod, ctx):
            return func.with_fields(body=ir.Call(ir.Op(self.op_name), [func.body]))

    p = Replace("nn.relu")
    assert isinstance(p, T.Pass) and p.name == "Replace" and p.opt_level == 1 and p.instance.op_name == "nn.relu"
    assert p(small_module())["main"].body.op.name == "nn.relu"


def test_module_pass_decorator():
    @T.module_pass
    def rename(mod, ctx):
        out = ir.IRModule()
        out["entry"] = mod["main"]
        return out

    assert rename.name == "rename"
    assert list(rename(small_module())) == ["entry"]

    @T.module_pass(name="Keep")
    class Keep:
        def transform_module(self, mod, ctx):
            return mod

    assert Keep()(small_module())["main"].kind == "Function"


def test_python_pass_restores_function_placement():
    @T.function_pass(name="Fresh")
    def fresh(func, mod, ctx):
        params = [ir.Var(p.name_hint, p.type_annotation) for p in func.params]
        return ir.Function(params, sy.op.nn.relu(params[0]))

    mod = fresh(small_module())
    assert str(mod["main"].params[0].virtual_device) == "cpu:0"
    assert str(mod["main"].virtual_device) == str(small_module()["main"].virtual_device)


def test_invariant_checker_instrument_directly():
    checker = T.InvariantChecker()
    mod = T.InferType()(small_module())
    checker.check(mod, "Manual")
    with T.PassContext(check_invariants=False, instruments=[checker]):
        out = T.InferType()(mod)
    assert checker.last_pass_touching(out["main"].body) == "InferType"
