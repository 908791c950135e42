# Layouts from Python and the command line: a layout is a part of the
# virtual device, PlanLayouts gives one to values passed between oneDNN
# convolutions and pools, a Python pass that rebuilds nodes keeps it without
# saying so, the checker names a pass that changes it where a value passes
# between kernels, and a user's pin (--layout, build(layouts=)) is honoured
# or refused naming the value's reader.
import os
import pathlib
import subprocess

import numpy as np
import pytest

import switchyard as sy
from switchyard import ir
from switchyard import transform as T

REPO = pathlib.Path(__file__).resolve().parents[2]
SWITCHYARD = (pathlib.Path(os.environ.get("SY_BUILD_DIR", REPO / "build")) / "bin" / "switchyard").resolve()

BLOCK = """
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w0: Tensor[(16, 3, 3, 3), float32],
          %w1: Tensor[(16, 16, 3, 3), float32]) -> Tensor[(1, 16, 4, 4), float32] {
  %0 = nn.relu(nn.conv2d(%x, %w0, padding=[1, 1]));
  %1 = nn.max_pool2d(%0, pool_size=[2, 2], strides=[2, 2]);
  nn.softmax(nn.conv2d(%1, %w1, padding=[1, 1]), axis=1)
}
"""


def fused_call_layouts(fn):
    layouts = []

    class Collect(ir.ExprVisitor):
        def visit_call(self, call):
            if isinstance(call.op, ir.Function):
                layouts.append(call.virtual_device.layout)

    Collect().visit(fn)
    return layouts


@pytest.fixture
def laid_out():
    mod = sy.parse(BLOCK)
    passes = [T.InferType(), T.PlanDevices(devices=["cpu:0"]), T.FuseOps(), T.PlanLayouts()]
    with T.PassContext(check_invariants=True):
        return T.Sequential(passes)(mod)


def test_a_layout_is_a_part_of_the_device():
    dense = ir.VirtualDevice("cpu:0")
    blocked = ir.VirtualDevice(kind="cpu", device_id=0, target="cpu", memory_scope="global", layout="nChw16c")
    assert dense.layout is None and blocked.layout == "nChw16c"
    assert blocked != dense and blocked.device_name == dense.device_name
    assert ir.VirtualDevice(str(blocked)[1:-1]) == blocked
    assert ir.VirtualDevice.join(blocked, ir.VirtualDevice(kind="cpu", layout="nhwc")) is None


def test_plan_layouts_lays_out_what_only_primitives_read(laid_out):
    layouts = fused_call_layouts(laid_out["main"])
    # conv0 and the pool feed primitives only; conv1 feeds the softmax loop.
    assert len(layouts) == 4
    assert layouts[0] is not None and layouts[0] == layouts[1]
    assert layouts[2] is None and layouts[3] is None
    assert f'layout="{layouts[0]}"' in laid_out.astext()


def test_a_python_pass_rebuilding_calls_keeps_their_layouts(laid_out):
    @T.function_pass(name="RebuildCalls")
    def rebuild(func, mod, ctx):
        class Rebuild(ir.ExprMutator):
            def visit_call(self, call):
                call = super().visit_call(call)
                # As relay.Call(op, args): no device given, so the replaced node's is inherited.
                return ir.Call(call.op, list(call.args), call.attrs)
        return Rebuild().visit(func)

    with T.PassContext(check_invariants=True):
        rebuilt = T.Sequential([rebuild])(laid_out)
    assert fused_call_layouts(rebuilt["main"]) == fused_call_layouts(laid_out["main"])


def test_the_checker_names_a_pass_that_changes_a_layout(laid_out):
    @T.function_pass(name="DenseEverything")
    def dense(func, mod, ctx):
        class Dense(ir.ExprMutator):
            def visit_call(self, call):
                call = super().visit_call(call)
                if isinstance(call.op, ir.Function) and call.virtual_device.layout:
                    return call.with_fields(virtual_device=ir.VirtualDevice("cpu:0"))
                return call
        return Dense().visit(func)

    with T.PassContext(check_invariants=True):
        with pytest.raises(sy.InvariantError) as info:
            T.Sequential([dense])(laid_out)
    message = info.value.message
    assert "after pass 'DenseEverything'" in message and "laid out as" in message, message


def test_plan_layouts_by_name_and_with_a_pin():
    planned = T.Sequential([T.InferType(), T.PlanDevices(devices=["cpu:0"]), T.FuseOps()])(sy.parse(BLOCK, "block.sy"))
    assert fused_call_layouts(T.pass_by_name("PlanLayouts")(planned)["main"])[0] is not None
    pinned = T.PlanLayouts(layouts=["node:block.sy:5:*=nChw8c"])(planned)
    assert fused_call_layouts(pinned["main"])[:2] == ["nChw8c", "nChw8c"]
    with pytest.raises(sy.UsageError, match="matches no kernel's result"):
        T.PlanLayouts(layouts=["node:nowhere=nhwc"])(planned)


def test_a_build_honours_a_layout_pin(tmp_path):
    mod = sy.parse(BLOCK, "block.sy")
    sy.build(mod, ["cpu:0"], tmp_path / "art", layouts=["node:block.sy:5:*=nChw8c"])
    manifest = (tmp_path / "art" / "manifest.json").read_text()
    assert '"nChw8c"' in manifest
    rng = np.random.default_rng(0)
    inputs = {name: rng.uniform(-1, 1, shape).astype(np.float32)
              for name, shape in [("x", (1, 3, 8, 8)), ("w0", (16, 3, 3, 3)), ("w1", (16, 16, 3, 3))]}
    out = sy.runtime.load(tmp_path / "art").run(**inputs)
    expected = sy.evaluate(mod, inputs)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


def test_the_command_line_refuses_a_pin_no_primitive_reads(tmp_path):
    model = tmp_path / "block.sy"
    model.write_text(BLOCK)
    result = subprocess.run([str(SWITCHYARD), "compile", str(model), "-o", str(tmp_path / "art"),
                             "--layout", "node:*block.sy:6:*=nhwc"], capture_output=True, text=True)
    assert result.returncode != 0
    assert "layout rule 'node:*block.sy:6:*=nhwc' pins a value that cannot have a layout: it is read by the " \
           "kernel nn.softmax" in result.stderr, result.stderr
    assert not (tmp_path / "art").exists()


LET_BLOCK = """
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w0: Tensor[(16, 3, 3, 3), float32],
          %w1: Tensor[(16, 16, 3, 3), float32]) -> Tensor[(1, 16, 4, 4), float32] {
  let %a = nn.relu(nn.conv2d(%x, %w0, padding=[1, 1]));
  let %b = nn.max_pool2d(%a, pool_size=[2, 2], strides=[2, 2]);
  let %c = nn.relu(nn.conv2d(%b, %w1, padding=[1, 1]));
  %c
}
"""


def test_let_variables_take_their_values_layouts_and_the_result_stays_dense(tmp_path):
    mod = sy.parse(LET_BLOCK, "let.sy")
    with T.PassContext(check_invariants=True):
        laid = T.Sequential([T.InferType(), T.PlanDevices(devices=["cpu:0"]), T.FuseOps(), T.PlanLayouts()])(mod)
    layouts = {}

    class Lets(ir.ExprVisitor):
        def visit_let(self, let):
            layouts[let.var.name_hint] = let.var.virtual_device.layout

    Lets().visit(laid["main"])
    assert layouts["a"] is not None and layouts["a"] == layouts["b"] and layouts["c"] is None, layouts
    sy.build(mod, ["cpu:0"], tmp_path / "art", check_invariants=True)
    rng = np.random.default_rng(1)
    inputs = {name: rng.uniform(-1, 1, shape).astype(np.float32)
              for name, shape in [("x", (1, 3, 8, 8)), ("w0", (16, 3, 3, 3)), ("w1", (16, 16, 3, 3))]}
    np.testing.assert_allclose(sy.runtime.load(tmp_path / "art").run(**inputs), sy.evaluate(mod, inputs),
                               rtol=1e-4, atol=1e-4)
