# The ONNX converters of If, Scan and Loop (converters_control.cc): bodies
# converted as subgraphs reading outer values, an If folded to its branch or
# kept as the IR's `if` (run on both values of the condition, interpreted and
# compiled), Scan and Loop unrolled against NumPy loops, and the refusals of
# what unrolling cannot do.
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import switchyard as sy

RNG = np.random.default_rng(5)
F = TensorProto.FLOAT


def value(name, elem=F, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def save(tmp_path, nodes, inputs, outputs, opset=13, inits=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, [numpy_helper.from_array(v, n) for n, v in inits])
    path = tmp_path / f"model_{len(list(tmp_path.glob('*.onnx')))}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), str(path))
    return path


def as_list(result):
    return list(result) if isinstance(result, (list, tuple)) else [result]


def run_both(tmp_path, path, **inputs):
    """The interpreter's outputs, checked equal to a compiled artifact's."""
    mod = sy.frontend.from_onnx(path)
    want = as_list(sy.evaluate(mod, **inputs))
    artifact = tmp_path / f"artifact_{len(list(tmp_path.glob('artifact_*')))}"
    sy.build(mod, ["cpu:0"], artifact)
    got = as_list(sy.runtime.load(artifact).run(**inputs))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    return want


def constant_node(name, array):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(array), name))


# ---- If ----------------------------------------------------------------------

def branches(then_nodes, then_out, else_nodes, else_out):
    return dict(then_branch=helper.make_graph(then_nodes, "then", [], then_out),
                else_branch=helper.make_graph(else_nodes, "else", [], else_out))


def test_if_on_a_run_time_condition_runs_either_branch(tmp_path):
    # Both branches read the outer x; two outputs, so the `if` gives a tuple.
    graph_branches = branches(
        [helper.make_node("Add", ["x", "x"], ["a"]), helper.make_node("Neg", ["x"], ["b"])],
        [value("a", F, [2, 3]), value("b", F, [2, 3])],
        [helper.make_node("Mul", ["x", "x"], ["c"]), helper.make_node("Abs", ["x"], ["d"])],
        [value("c", F, [2, 3]), value("d", F, [2, 3])])
    node = helper.make_node("If", ["cond"], ["y", "z"], name="choose", **graph_branches)
    path = save(tmp_path, [node], [value("cond", TensorProto.BOOL, []), value("x", F, [2, 3])],
                [value("y", F, [2, 3]), value("z", F, [2, 3])])
    assert "if (%cond)" in str(sy.frontend.from_onnx(path))
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    y, z = run_both(tmp_path, path, cond=np.array(True), x=x)
    np.testing.assert_allclose(y, x + x)
    np.testing.assert_allclose(z, -x)
    y, z = run_both(tmp_path, path, cond=np.array(False), x=x)
    np.testing.assert_allclose(y, x * x)
    np.testing.assert_allclose(z, np.abs(x))


def test_if_on_a_known_condition_is_its_branch(tmp_path):
    # The else branch holds an operator Switchyard lacks: never converted.
    graph_branches = branches([helper.make_node("Relu", ["x"], ["a"])], [value("a")],
                              [helper.make_node("NoSuchOp", ["x"], ["b"], domain="example.com")], [value("b")])
    nodes = [constant_node("cond", np.array(True)), helper.make_node("If", ["cond"], ["y"], **graph_branches)]
    path = save(tmp_path, nodes, [value("x", F, [4])], [value("y", F, [4])])
    mod = sy.frontend.from_onnx(path)
    assert "if (" not in str(mod)
    x = np.array([-1, 2, -3, 4], np.float32)
    np.testing.assert_array_equal(sy.evaluate(mod, x=x), np.maximum(x, 0))


def test_if_branches_of_different_shapes_on_a_run_time_condition_are_refused(tmp_path):
    graph_branches = branches([helper.make_node("Identity", ["x"], ["a"])], [value("a")],
                              [helper.make_node("Concat", ["x", "x"], ["b"], axis=0)], [value("b")])
    node = helper.make_node("If", ["cond"], ["y"], name="choose", **graph_branches)
    path = save(tmp_path, [node], [value("cond", TensorProto.BOOL, []), value("x", F, [2])], [value("y")])
    with pytest.raises(sy.Error, match=r"node 'choose' \(If\): output 0 is Tensor\[\(2\), float32\] in then_branch "
                                       r"and Tensor\[\(4\), float32\] in else_branch"):
        sy.frontend.from_onnx(path)


def test_an_unknown_operator_in_a_branch_is_named(tmp_path):
    graph_branches = branches([helper.make_node("Frobnicate", ["x"], ["a"], name="inner")], [value("a")],
                              [helper.make_node("Identity", ["x"], ["b"])], [value("b")])
    node = helper.make_node("If", ["cond"], ["y"], **graph_branches)
    path = save(tmp_path, [node], [value("cond", TensorProto.BOOL, []), value("x", F, [2])], [value("y")])
    with pytest.raises(sy.Error, match=r"node 'inner' \(Frobnicate\): the operator is not supported "
                                       r"\(in subgraph 'then' of node \(unnamed\) \(If\)\)"):
        sy.frontend.from_onnx(path)


# ---- Scan --------------------------------------------------------------------

def scan_body():
    """(sum, product) states; scan inputs a, b; outputs the new states and
    the per-step a * sum."""
    nodes = [helper.make_node("Add", ["sum_in", "a"], ["sum_out"]), helper.make_node("Mul", ["prod_in", "b"], ["prod_out"]),
             helper.make_node("Mul", ["a", "sum_in"], ["step"])]
    return helper.make_graph(nodes, "body", [value("sum_in"), value("prod_in"), value("a"), value("b")],
                             [value("sum_out"), value("prod_out"), value("step")])


def numpy_scan(s, p, a_steps, b_steps):
    steps = []
    for a, b in zip(a_steps, b_steps):
        steps.append(a * s)
        s, p = s + a, p * b
    return s, p, steps


def test_scan_axes_and_directions_match_numpy(tmp_path):
    # a scanned along axis 1 backwards, b along axis 0; the output stacked
    # along axis 1, backwards.
    node = helper.make_node("Scan", ["s", "p", "a", "b"], ["s_out", "p_out", "steps"], body=scan_body(), num_scan_inputs=2,
                            scan_input_axes=[1, 0], scan_input_directions=[1, 0], scan_output_axes=[-1],
                            scan_output_directions=[1])
    path = save(tmp_path, [node], [value("s", F, [3]), value("p", F, [3]), value("a", F, [3, 5]), value("b", F, [5, 3])],
                [value("s_out"), value("p_out"), value("steps")], opset=11)
    s, p = RNG.standard_normal(3).astype(np.float32), RNG.standard_normal(3).astype(np.float32)
    a, b = RNG.standard_normal((3, 5)).astype(np.float32), RNG.standard_normal((5, 3)).astype(np.float32)
    got = run_both(tmp_path, path, s=s, p=p, a=a, b=b)
    want_s, want_p, steps = numpy_scan(s, p, [a[:, t] for t in reversed(range(5))], list(b))
    np.testing.assert_allclose(got[0], want_s, rtol=1e-5)
    np.testing.assert_allclose(got[1], want_p, rtol=1e-5)
    np.testing.assert_allclose(got[2], np.stack(steps[::-1], axis=1), rtol=1e-5)


def test_scan_8_scans_each_batch_element(tmp_path):
    node = helper.make_node("Scan", ["", "s", "p", "a", "b"], ["s_out", "p_out", "steps"], body=scan_body(),
                            num_scan_inputs=2, directions=[0, 1])
    path = save(tmp_path, [node], [value("s", F, [2, 3]), value("p", F, [2, 3]), value("a", F, [2, 4, 3]),
                                   value("b", F, [2, 4, 3])], [value("s_out"), value("p_out"), value("steps")], opset=8)
    s, p = RNG.standard_normal((2, 3)).astype(np.float32), RNG.standard_normal((2, 3)).astype(np.float32)
    a, b = RNG.standard_normal((2, 4, 3)).astype(np.float32), RNG.standard_normal((2, 4, 3)).astype(np.float32)
    got = as_list(sy.evaluate(sy.frontend.from_onnx(path), s=s, p=p, a=a, b=b))
    for n in range(2):
        want_s, want_p, steps = numpy_scan(s[n], p[n], list(a[n]), list(b[n][::-1]))
        np.testing.assert_allclose(got[0][n], want_s, rtol=1e-5)
        np.testing.assert_allclose(got[1][n], want_p, rtol=1e-5)
        np.testing.assert_allclose(got[2][n], np.stack(steps), rtol=1e-5)


# ---- Loop --------------------------------------------------------------------

def loop_body(extra_nodes=(), cond_out="cond_in"):
    """Carries y; y_out = y + x[i] (x an outer value), scan output y_out * i."""
    nodes = [helper.make_node("Unsqueeze", ["i", "zero"], ["i1"]), helper.make_node("Gather", ["x", "i1"], ["row"], axis=0),
             helper.make_node("Add", ["y_in", "row"], ["y_out"]), helper.make_node("Cast", ["i"], ["fi"], to=F),
             helper.make_node("Mul", ["y_out", "fi"], ["scaled"]), *extra_nodes,
             helper.make_node("Identity", [cond_out], ["cond_out"])]
    return helper.make_graph(nodes, "body", [value("i", TensorProto.INT64, []), value("cond_in", TensorProto.BOOL, []),
                                             value("y_in")], [value("cond_out"), value("y_out"), value("scaled")],
                             [numpy_helper.from_array(np.array([0], np.int64), "zero")])


def numpy_loop(y, x, count):
    scaled = []
    for i in range(count):
        y = y + x[i]
        scaled.append(y * i)
    return y, np.stack(scaled)


def test_loop_with_a_known_trip_count_unrolls(tmp_path):
    node = helper.make_node("Loop", ["m", "", "y"], ["y_final", "scaled"], body=loop_body())
    path = save(tmp_path, [node], [value("x", F, [6, 2]), value("y", F, [1, 2])], [value("y_final"), value("scaled")],
                inits=[("m", np.array(4, np.int64))])
    x, y = RNG.standard_normal((6, 2)).astype(np.float32), RNG.standard_normal((1, 2)).astype(np.float32)
    got = run_both(tmp_path, path, x=x, y=y)
    want_y, want_scaled = numpy_loop(y, x, 4)
    np.testing.assert_allclose(got[0], want_y, rtol=1e-5)
    np.testing.assert_allclose(got[1], want_scaled, rtol=1e-5)


def test_loop_ends_when_its_folded_condition_turns_false(tmp_path):
    # No trip count: the condition i < 2 folds each iteration (3 runs: 0, 1, 2).
    less = [constant_node("two", np.array(2, np.int64)), helper.make_node("Less", ["i", "two"], ["again"])]
    node = helper.make_node("Loop", ["", "go", "y"], ["y_final", "scaled"], body=loop_body(less, "again"))
    path = save(tmp_path, [node], [value("x", F, [6, 2]), value("y", F, [1, 2])], [value("y_final"), value("scaled")],
                inits=[("go", np.array(True))])
    x, y = RNG.standard_normal((6, 2)).astype(np.float32), RNG.standard_normal((1, 2)).astype(np.float32)
    got = as_list(sy.evaluate(sy.frontend.from_onnx(path), x=x, y=y))
    want_y, want_scaled = numpy_loop(y, x, 3)
    np.testing.assert_allclose(got[0], want_y, rtol=1e-5)
    np.testing.assert_allclose(got[1], want_scaled, rtol=1e-5)


def test_loops_that_depend_on_data_are_refused(tmp_path):
    node = helper.make_node("Loop", ["m", "", "y"], ["y_final", "scaled"], name="loop", body=loop_body())
    path = save(tmp_path, [node], [value("m", TensorProto.INT64, []), value("x", F, [6, 2]), value("y", F, [1, 2])],
                [value("y_final"), value("scaled")])
    with pytest.raises(sy.Error, match=r"node 'loop' \(Loop\): the trip count \('m'\) is known only at run time"):
        sy.frontend.from_onnx(path)
    # A condition computed from the carried value: known only at run time.
    positive = [constant_node("zero_f", np.array(0, np.float32)), helper.make_node("ReduceSum", ["y_out"], ["total"]),
                helper.make_node("Greater", ["total", "zero_f"], ["again"])]
    node = helper.make_node("Loop", ["m", "", "y"], ["y_final", "scaled"], name="loop", body=loop_body(positive, "again"))
    path = save(tmp_path, [node], [value("x", F, [6, 2]), value("y", F, [1, 2])], [value("y_final"), value("scaled")],
                inits=[("m", np.array(3, np.int64))])
    with pytest.raises(sy.Error, match="the condition after iteration 0 .* is known only at run time"):
        sy.frontend.from_onnx(path)


def test_an_endless_loop_is_refused(tmp_path):
    nodes = [helper.make_node("Identity", ["cond_in"], ["cond_out"]), helper.make_node("Neg", ["y_in"], ["y_out"])]
    body = helper.make_graph(nodes, "body", [value("i", TensorProto.INT64, []), value("cond_in", TensorProto.BOOL, []),
                                             value("y_in")], [value("cond_out"), value("y_out")])
    node = helper.make_node("Loop", ["", "go", "y"], ["y_final"], name="loop", body=body)
    path = save(tmp_path, [node], [value("y", F, [2])], [value("y_final")], inits=[("go", np.array(True))])
    with pytest.raises(sy.Error, match=r"node 'loop' \(Loop\): unrolling 100001 iterations of a 2-node body exceeds"):
        sy.frontend.from_onnx(path)


def test_a_condition_without_a_condition_input_turning_false_is_refused(tmp_path):
    # ONNX's specification ignores the body's condition when the node has no
    # condition input; ONNX Runtime stops on it. Refused where they differ.
    less = [constant_node("two", np.array(2, np.int64)), helper.make_node("Less", ["i", "two"], ["again"])]
    node = helper.make_node("Loop", ["m", "", "y"], ["y_final", "scaled"], name="loop", body=loop_body(less, "again"))
    path = save(tmp_path, [node], [value("x", F, [6, 2]), value("y", F, [1, 2])], [value("y_final"), value("scaled")],
                inits=[("m", np.array(5, np.int64))])
    with pytest.raises(sy.Error, match=r"node 'loop' \(Loop\): the body's condition turns false after iteration 2 of a "
                                       r"loop without a condition input"):
        sy.frontend.from_onnx(path)
    # With the trip count ending the loop there, both agree.
    path = save(tmp_path, [node], [value("x", F, [6, 2]), value("y", F, [1, 2])], [value("y_final"), value("scaled")],
                inits=[("m", np.array(3, np.int64))])
    x, y = RNG.standard_normal((6, 2)).astype(np.float32), RNG.standard_normal((1, 2)).astype(np.float32)
    got = as_list(sy.evaluate(sy.frontend.from_onnx(path), x=x, y=y))
    np.testing.assert_allclose(got[0], numpy_loop(y, x, 3)[0], rtol=1e-5)


def test_if_on_a_computed_condition_compiled_and_split(tmp_path):
    # The condition is computed by a kernel and read on the host; each branch
    # reads values computed before the If.
    graph_branches = branches([helper.make_node("Mul", ["twice", "x"], ["a"])], [value("a", F, [3, 4])],
                              [helper.make_node("Sub", ["twice", "x"], ["b"])], [value("b", F, [3, 4])])
    nodes = [constant_node("zero", np.array(0, np.float32)), helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0),
             helper.make_node("Greater", ["total", "zero"], ["cond"]), helper.make_node("Add", ["x", "x"], ["twice"]),
             helper.make_node("If", ["cond"], ["y"], name="choose", **graph_branches)]
    path = save(tmp_path, nodes, [value("x", F, [3, 4])], [value("y", F, [3, 4])])
    mod = sy.frontend.from_onnx(path)
    sy.build(mod, ["cpu:0", "cpu:1"], tmp_path / "split", place=["node:choose=cpu:1"])
    split = sy.runtime.load(tmp_path / "split")
    for sign in (1, -1):
        x = np.abs(RNG.standard_normal((3, 4))).astype(np.float32) * sign
        want = (x + x) * x if sign > 0 else (x + x) - x
        np.testing.assert_allclose(run_both(tmp_path, path, x=x)[0], want, rtol=1e-6)
        np.testing.assert_allclose(as_list(split.run(x=x))[0], want, rtol=1e-6)
