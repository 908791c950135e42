# Layouts from Python: a layout is a part of the virtual device, PlanLayouts
# gives one to values passed between oneDNN convolutions and pools, a
# Python pass that rebuilds nodes keeps it without saying so, and the
# checker names a pass that changes it where a value passes between kernels.
import pytest

import switchyard as sy
from switchyard import ir
from switchyard import transform as T

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
    passes = [T.InferType(), T.PlanDevices(devices=["cpu:0"]), T.FuseOps(), T.pass_by_name("PlanLayouts")]
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
