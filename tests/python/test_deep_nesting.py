# Structures nested 100,000 deep through the Python API, in the default
# 8 MiB native stack: types print, compare and hash; nested tuples infer,
# print and evaluate in memory linear in the depth; an if chain prints as
# text linear in the depth.
import os
import subprocess
import sys

import numpy as np

import switchyard as sy
from switchyard import ir
from switchyard import transform as T

DEPTH = 100_000
X = ir.Var("x", ir.TensorType((2,)))


def nested_tuple_type(depth):
    t = ir.TensorType((2,))
    for _ in range(depth):
        t = ir.TupleType([t])
    return t


def test_a_deeply_nested_type_prints_compares_and_hashes():
    t = nested_tuple_type(DEPTH)
    text = str(t)
    assert text.startswith("((((") and text.endswith("Tensor[(2), float32]" + ",)" * DEPTH)
    same = nested_tuple_type(DEPTH)
    assert t == same and hash(t) == hash(same)
    assert t != nested_tuple_type(DEPTH - 1)


def test_deeply_nested_tuples_infer_print_and_compare():
    e = X
    for _ in range(DEPTH):
        e = ir.Tuple([e])
    mod = T.InferType()(ir.IRModule.from_expr(ir.Function([X], e)))
    text = str(mod)
    assert text.count("Tensor[(2), float32]") >= 1 and len(text) < 100 * DEPTH
    assert ir.structural_equal(mod, mod)
    assert ir.structural_hash(mod) == ir.structural_hash(mod)


# In a child process, so its peak memory is its own: a tuple nested 100,000
# deep, taken apart again, evaluated. Copying each level's fields made this
# quadratic (4,000 levels took 900 MB; 100,000 were killed by the kernel).
EVALUATE_DEEP_TUPLE = f"""
import resource, numpy as np, switchyard as sy
from switchyard import ir, transform as T
x = ir.Var("x", ir.TensorType((2,)))
e = x
for _ in range({DEPTH}): e = ir.Tuple([e])
for _ in range({DEPTH}): e = ir.TupleGetItem(e, 0)
mod = T.InferType()(ir.IRModule.from_expr(ir.Function([x], e)))
out = sy.evaluate(mod, x=np.array([1, 2], np.float32))
assert out.tolist() == [1.0, 2.0], out
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def peak_memory_mb_of(script):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return int(run.stdout.split()[-1])


def test_evaluating_a_deeply_nested_tuple_takes_linear_memory():
    peak_mb = peak_memory_mb_of(EVALUATE_DEEP_TUPLE)
    assert peak_mb < 1500, f"peak memory {peak_mb} MB for {DEPTH} levels"


# Device planning of the same nesting, on two devices with the input wished
# onto the second: each level's placement domain and checked placement used
# to copy all the levels below it (4,000 levels took 4.5 s and 1 GB).
PLAN_DEEP_TUPLE = f"""
import resource, numpy as np, switchyard as sy
from switchyard import ir, transform as T
x = ir.Var("x", ir.TensorType((2,)), virtual_device="cpu:1")
e = x
for _ in range({DEPTH}): e = ir.Tuple([e])
whole = e
for _ in range({DEPTH}): e = ir.TupleGetItem(e, 0)
for body in (whole, e):
    mod = T.InferType()(ir.IRModule.from_expr(ir.Function([x], body)))
    with T.PassContext(check_invariants=True):
        mod = T.PlanDevices(devices="cpu:0,cpu:1")(mod)
    assert mod["main"].params[0].virtual_device == ir.VirtualDevice("cpu:1")
    assert mod["main"].body.virtual_device == ir.VirtualDevice("cpu:1")
out = sy.evaluate(mod, x=np.array([1, 2], np.float32))
assert out.tolist() == [1.0, 2.0], out
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def test_planning_devices_of_a_deeply_nested_tuple_takes_linear_memory():
    peak_mb = peak_memory_mb_of(PLAN_DEEP_TUPLE)
    assert peak_mb < 1500, f"peak memory {peak_mb} MB for {DEPTH} levels"


def test_a_deep_if_chain_prints_as_text_linear_in_its_depth():
    cond = ir.Var("c", ir.TensorType((), "bool"))
    e = X
    for _ in range(DEPTH):
        e = ir.If(cond, X, e)
    text = str(ir.IRModule.from_expr(ir.Function([cond, X], e)))
    # Indentation is capped, so each level costs one line of bounded width
    # (it was quadratic: 50,000 levels printed 10 GB).
    assert text.count("} else {") == DEPTH
    assert len(text) < 400 * DEPTH, len(text)


def test_text_past_the_indentation_cap_parses_back():
    cond = ir.Var("c", ir.TensorType((), "bool"))
    e = X
    for _ in range(100):  # the parser's nesting limit is 1,000
        e = ir.If(cond, X, e)
    mod = T.InferType()(ir.IRModule.from_expr(ir.Function([cond, X], e)))
    sy.testing.assert_structural_equal(T.InferType()(sy.parse(mod.astext(show_weights=True))), mod)
