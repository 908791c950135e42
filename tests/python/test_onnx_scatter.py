# The ONNX converters of ScatterND, ScatterElements and Scatter-9 (built at
# import from take and where over constant positions and masks): one-node
# models against NumPy loops, through the interpreter and a compiled
# artifact, with every reduction, negative and duplicate indices, the
# all-constant case folded at import, and each refusal with its message.
import pathlib

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import switchyard as sy

RNG = np.random.default_rng(5)
COMBINE = {"none": lambda a, b: b, "add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def element_type(dtype):
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]


def scatter_nd_reference(data, indices, updates, reduction="none"):
    out = data.copy()
    for i in np.ndindex(indices.shape[:-1]):
        where = tuple(indices[i])
        out[where] = COMBINE[reduction](out[where], updates[i])
    return out


def scatter_elements_reference(data, indices, updates, axis=0, reduction="none"):
    out = data.copy()
    for p in np.ndindex(indices.shape):
        target = list(p)
        target[axis] = indices[p]
        out[tuple(target)] = COMBINE[reduction](out[tuple(target)], updates[p])
    return out


def save_node(tmp_path, op, data, indices, updates, opset, constant_indices=True, constant_data=False, **attrs):
    """A one-node model; the indices (and the data, when asked) are initializers."""
    node = helper.make_node(op, ["data", "indices", "updates"], ["y"], name="scatter", **attrs)
    runtime = [("updates", updates)] + ([] if constant_data else [("data", data)])
    runtime += [] if constant_indices else [("indices", indices)]
    known = [("indices", indices)] if constant_indices else []
    known += [("data", data)] if constant_data else []
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(n, element_type(v.dtype), v.shape) for n, v in runtime],
        [helper.make_tensor_value_info("y", element_type(data.dtype), data.shape)],
        [numpy_helper.from_array(v, n) for n, v in known])
    path = tmp_path / f"{op}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), str(path))
    return path, dict(runtime)


def run_both_ways(tmp_path, path, inputs):
    """The interpreter's result, after checking the compiled artifact gives the same."""
    mod = sy.frontend.from_onnx(path)
    expected = sy.evaluate(mod, **inputs)
    sy.build(mod, ["cpu:0"], tmp_path / "artifact")
    got = sy.runtime.load(tmp_path / "artifact").run(**inputs)
    got = got[0] if isinstance(got, (list, tuple)) else got
    np.testing.assert_array_equal(got, expected)
    return expected


@pytest.mark.parametrize("reduction, opset", [("none", 13), ("add", 16), ("mul", 16), ("max", 18), ("min", 18)])
def test_scatter_nd_matches_numpy_with_duplicates_and_negative_indices(tmp_path, reduction, opset):
    data = RNG.standard_normal((4, 3, 5)).astype(np.float32)
    # Rows (1, 2) three times (once as (-3, -1)), (0, 0) twice.
    indices = np.array([[[1, 2], [0, 0]], [[-3, -1], [3, 1]], [[1, 2], [0, 0]]], np.int64)
    updates = RNG.standard_normal((3, 2, 5)).astype(np.float32)
    attrs = {} if reduction == "none" else {"reduction": reduction}
    path, inputs = save_node(tmp_path, "ScatterND", data, indices, updates, opset, **attrs)
    want = scatter_nd_reference(data, indices % np.array([4, 3]), updates, reduction)
    np.testing.assert_allclose(run_both_ways(tmp_path, path, inputs), want, rtol=1e-6)


def test_scatter_nd_of_whole_rows_and_of_elements(tmp_path):
    data = RNG.standard_normal((5, 4)).astype(np.float32)
    rows, row_updates = np.array([[4], [1]], np.int32), RNG.standard_normal((2, 4)).astype(np.float32)
    path, inputs = save_node(tmp_path, "ScatterND", data, rows, row_updates, 13)
    np.testing.assert_array_equal(run_both_ways(tmp_path, path, inputs), scatter_nd_reference(data, rows, row_updates))
    elements, element_updates = np.array([[0, 3], [4, -4]], np.int64), np.array([7, 8], np.float32)
    path, inputs = save_node(tmp_path, "ScatterND", data, elements, element_updates, 11)
    want = scatter_nd_reference(data, elements % np.array([5, 4]), element_updates)
    np.testing.assert_array_equal(sy.evaluate(sy.frontend.from_onnx(path), **inputs), want)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("reduction, opset", [("none", 11), ("add", 16), ("mul", 16), ("max", 18), ("min", 18)])
def test_scatter_elements_matches_numpy(tmp_path, axis, reduction, opset):
    data = RNG.standard_normal((3, 4)).astype(np.float32)
    indices = RNG.integers(-data.shape[axis], data.shape[axis], (2, 3)).astype(np.int64)
    updates = RNG.standard_normal((2, 3)).astype(np.float32)
    attrs = {} if reduction == "none" else {"reduction": reduction}
    path, inputs = save_node(tmp_path, "ScatterElements", data, indices, updates, opset, axis=axis, **attrs)
    want = scatter_elements_reference(data, indices % data.shape[axis], updates, axis % 2, reduction)
    if reduction == "none":  # duplicates are unordered in ONNX; Switchyard keeps the last
        got = sy.evaluate(sy.frontend.from_onnx(path), **inputs)
    else:
        got = run_both_ways(tmp_path, path, inputs)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_deprecated_scatter_is_scatter_elements_at_opset_9_and_refused_from_11(tmp_path):
    data = np.arange(12, dtype=np.int32).reshape(3, 4)
    indices, updates = np.array([[2, 0, 1, -1]], np.int64), np.array([[-1, -2, -3, -4]], np.int32)
    path, inputs = save_node(tmp_path, "Scatter", data, indices, updates, 9, axis=0)
    want = scatter_elements_reference(data, indices % 3, updates)
    np.testing.assert_array_equal(run_both_ways(tmp_path, path, inputs), want)
    path, _ = save_node(tmp_path, "Scatter", data, indices, updates, 11, axis=0)
    with pytest.raises(sy.Error, match=r"node 'scatter' \(Scatter\): Scatter-11 .*deprecated.*ScatterElements"):
        sy.frontend.from_onnx(path)


def test_scatter_with_every_input_known_folds_at_import(tmp_path):
    # Swin-T's attention mask: zeros with a value per window region, all
    # computed from constants, so the import leaves a constant.
    data = np.zeros((6, 6), np.float32)
    indices = np.array([[[r, c] for c in range(6)] for r in range(4, 6)], np.int64)
    updates = np.full((2, 6), 3, np.float32)
    node = helper.make_node("ScatterND", ["data", "indices", "updates"], ["s"], name="scatter")
    add = helper.make_node("Add", ["x", "s"], ["y"], name="add")
    graph = helper.make_graph(
        [node, add], "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, (6, 6))],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, (6, 6))],
        [numpy_helper.from_array(v, n) for n, v in [("data", data), ("indices", indices), ("updates", updates)]])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(tmp_path / "m.onnx"))
    mod = sy.frontend.from_onnx(tmp_path / "m.onnx")
    text = mod.astext()
    assert "add(%x, meta[Constant]" in text and "take" not in text and "where" not in text, text
    x = RNG.standard_normal((6, 6)).astype(np.float32)
    np.testing.assert_array_equal(sy.evaluate(mod, x=x), x + scatter_nd_reference(data, indices, updates))


def test_bool_scatter_adds_as_or(tmp_path):
    data = np.array([True, False, False, False])
    indices, updates = np.array([[1], [1], [2]], np.int64), np.array([True, False, False])
    path, inputs = save_node(tmp_path, "ScatterND", data, indices, updates, 16, reduction="add")
    np.testing.assert_array_equal(run_both_ways(tmp_path, path, inputs), [True, True, False, False])


@pytest.mark.parametrize("op", ["ScatterND", "ScatterElements"])
def test_out_of_range_index_names_the_node(tmp_path, op):
    data, updates = np.zeros((3, 2), np.float32), np.ones((1, 2), np.float32)
    indices = np.array([[3]], np.int64) if op == "ScatterND" else np.array([[0, -4]], np.int64)
    path, _ = save_node(tmp_path, op, data, indices, updates, 13)
    with pytest.raises(sy.Error, match=rf"node 'scatter' \({op}\): index (3|-4) is out of range for axis 0 of size 3"):
        sy.frontend.from_onnx(path)


@pytest.mark.parametrize("op", ["ScatterND", "ScatterElements"])
def test_indices_computed_at_run_time_are_refused(tmp_path, op):
    data, indices, updates = np.zeros((3, 2), np.float32), np.array([[1, 0]], np.int64), np.ones((1, 2), np.float32)
    path, _ = save_node(tmp_path, op, data, indices, updates, 13, constant_indices=False)
    with pytest.raises(sy.Error, match=rf"node 'scatter' \({op}\): the indices are computed at run time"):
        sy.frontend.from_onnx(path)


def test_bad_dtypes_shapes_and_reductions_name_the_node(tmp_path):
    data, indices = np.zeros((3, 2), np.float32), np.array([[1]], np.int64)
    path, _ = save_node(tmp_path, "ScatterND", data, indices, np.ones((1, 2), np.int32), 13)
    with pytest.raises(sy.Error, match=r"node 'scatter' \(ScatterND\): updates are int32 but the data is float32"):
        sy.frontend.from_onnx(path)
    path, _ = save_node(tmp_path, "ScatterND", data, indices, np.ones((1, 3), np.float32), 13)
    with pytest.raises(sy.Error, match=r"node 'scatter' \(ScatterND\): updates are \(1, 3\) but"):
        sy.frontend.from_onnx(path)
    path, _ = save_node(tmp_path, "ScatterND", data, indices.astype(np.float32), np.ones((1, 2), np.float32), 13)
    with pytest.raises(sy.Error, match=r"node 'scatter' \(ScatterND\): indices must be integers"):
        sy.frontend.from_onnx(path)
    path, _ = save_node(tmp_path, "ScatterND", data, indices, np.ones((1, 2), np.float32), 16, reduction="max")
    with pytest.raises(sy.Error, match=r"reduction 'max' is not one of none, add, mul"):
        sy.frontend.from_onnx(path)


# ---- ONNX backend node cases ------------------------------------------------

NODE_DATA = pathlib.Path("/usr/share/libonnx-testdata/data/node")
CASES = sorted(d.name for d in NODE_DATA.glob("test_scatter*"))


@pytest.mark.skipif(not CASES, reason="ONNX's backend test data (libonnx-testdata) is not installed")
@pytest.mark.parametrize("case", CASES)
def test_onnx_backend_cases_pass_with_their_indices_frozen(tmp_path, case):
    """As shipped the indices are a graph input, refused; made an
    initializer, each case matches ONNX's expected output."""
    folder = NODE_DATA / case / "test_data_set_0"
    model = onnx.load(str(NODE_DATA / case / "model.onnx"))
    feeds = {i.name: numpy_helper.to_array(onnx.load_tensor(str(folder / f"input_{n}.pb")))
             for n, i in enumerate(model.graph.input)}
    want = numpy_helper.to_array(onnx.load_tensor(str(folder / "output_0.pb")))
    onnx.save(model, str(tmp_path / "as_is.onnx"))
    with pytest.raises(sy.Error, match="the indices are computed at run time"):
        sy.frontend.from_onnx(tmp_path / "as_is.onnx")
    model.graph.initializer.append(numpy_helper.from_array(feeds.pop("indices"), "indices"))
    onnx.save(model, str(tmp_path / "frozen.onnx"))
    np.testing.assert_array_equal(run_both_ways(tmp_path, tmp_path / "frozen.onnx", feeds), want)
