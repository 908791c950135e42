# The ONNX converters of TopK and CumSum, onto the IR operators
# topk_indices and cumsum: one-node models against NumPy through the
# interpreter and a compiled artifact (every version, axis, direction,
# ties, NaN and integer dtypes), ONNX's backend node cases, and each
# refusal with its message.
import pathlib

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import switchyard as sy

RNG = np.random.default_rng(17)


def element_type(dtype):
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]


def save(tmp_path, op, x, opset, inits=(), outputs=("y",), **attrs):
    """A one-node model reading graph input x, then initializers `inits`."""
    names = ["x"] + [name for name, _ in inits]
    node = helper.make_node(op, names, list(outputs), name="node", **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", element_type(x.dtype), x.shape)],
        [helper.make_tensor_value_info(o, onnx.TensorProto.UNDEFINED, None) for o in outputs],
        [numpy_helper.from_array(v, n) for n, v in inits])
    path = tmp_path / f"{op}_{opset}_{len(list(tmp_path.glob('*.onnx')))}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), str(path))
    return path


def both_ways(tmp_path, path, **inputs):
    """The outputs (a list) of the interpreter, checked equal to the compiled artifact's."""
    mod = sy.frontend.from_onnx(path)
    expected = sy.evaluate(mod, **inputs)
    expected = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    sy.build(mod, ["cpu:0"], tmp_path / "artifact")
    got = sy.runtime.load(tmp_path / "artifact").run(**inputs)
    got = list(got) if isinstance(got, (list, tuple)) else [got]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)
    return expected


def top_k_reference(x, k, axis, largest):
    # Sorted by (NaN first when largest, last when smallest; then the value),
    # stably, so ties keep position order.
    nan = np.isnan(x) if x.dtype.kind == "f" else np.zeros(x.shape, bool)
    value = np.where(nan, 0, x).astype(np.float64)
    order = np.lexsort((-value, ~nan) if largest else (value, nan), axis=axis)
    indices = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, indices, axis=axis), indices


# ---- TopK -------------------------------------------------------------------

@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("largest", [1, 0])
def test_top_k_matches_numpy(tmp_path, axis, largest):
    x = RNG.standard_normal((4, 6, 5)).astype(np.float32)
    x[1, 2, :] = x[1, 3, :]  # ties along axis 1
    x[:, :, 4] = x[:, :, 0]  # and along the last axis
    k = 3
    path = save(tmp_path, "TopK", x, 11, [("k", np.array([k], np.int64))], outputs=("values", "indices"), axis=axis,
                largest=largest)
    values, indices = both_ways(tmp_path, path, x=x)
    want_values, want_indices = top_k_reference(x, k, axis, largest)
    assert indices.dtype == np.int64
    np.testing.assert_array_equal(indices, want_indices)
    np.testing.assert_array_equal(values, want_values)


def test_top_k_of_integers_ties_and_nan(tmp_path):
    x = np.array([[3, 1, 3, 2, 1, 3]], np.int32)
    path = save(tmp_path, "TopK", x, 11, [("k", np.array([4], np.int64))], outputs=("values", "indices"), largest=0)
    values, indices = both_ways(tmp_path, path, x=x)
    np.testing.assert_array_equal(indices, [[1, 4, 3, 0]])
    np.testing.assert_array_equal(values, [[1, 1, 2, 3]])
    x = np.array([[1.0, np.nan, 5.0, np.nan, -2.0]], np.float32)
    for largest, want in [(1, [1, 3, 2]), (0, [4, 0, 2])]:
        path = save(tmp_path, "TopK", x, 11, [("k", np.array([3], np.int64))], outputs=("values", "indices"),
                    largest=largest)
        values, indices = both_ways(tmp_path / str(largest), path, x=x)
        np.testing.assert_array_equal(indices, [want])
        np.testing.assert_array_equal(values, x[:, want])


def test_top_k_versions_take_k_as_attribute_then_input(tmp_path):
    x = RNG.standard_normal((3, 7)).astype(np.float32)
    values, indices = both_ways(tmp_path, save(tmp_path, "TopK", x, 9, outputs=("values", "indices"), k=2), x=x)
    np.testing.assert_array_equal(indices, top_k_reference(x, 2, -1, True)[1])
    path = save(tmp_path, "TopK", x, 10, [("k", np.array([7], np.int64))], outputs=("values", "indices"), axis=1)
    values, indices = both_ways(tmp_path / "10", path, x=x)
    np.testing.assert_array_equal(values, -np.sort(-x, axis=1))
    with pytest.raises(sy.Error, match=r"attribute 'largest' is not supported \(TopK-10"):
        sy.frontend.from_onnx(save(tmp_path, "TopK", x, 10, [("k", np.array([2], np.int64))],
                                   outputs=("values", "indices"), largest=0))


def test_top_k_refusals_name_the_node(tmp_path):
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    cases = [
        (save(tmp_path, "TopK", x, 11, [("k", np.array([5], np.int64))], outputs=("v", "i")),
         r"k = 5 is outside \[1, 4\], the extent of axis 1"),
        (save(tmp_path, "TopK", x, 11, [("k", np.array([0], np.int64))], outputs=("v", "i")),
         r"k = 0 is outside .*empty outputs are not supported"),
        (save(tmp_path, "TopK", x, 11, [("k", np.array([1.0], np.float32))], outputs=("v", "i")), "k must be an integer"),
        (save(tmp_path, "TopK", x.astype(bool), 11, [("k", np.array([1], np.int64))], outputs=("v", "i")),
         "needs a numeric input, got bool"),
    ]
    for path, message in cases:
        with pytest.raises(sy.Error, match=r"node 'node' \(TopK\): " + message):
            sy.frontend.from_onnx(path)
    # k computed at run time
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"], name="node")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x.shape),
                                            helper.make_tensor_value_info("k", onnx.TensorProto.INT64, [1])],
                              [helper.make_tensor_value_info("v", onnx.TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)]), str(tmp_path / "k.onnx"))
    with pytest.raises(sy.Error, match=r"node 'node' \(TopK\): input 1 \('k', the k\) must be known at import"):
        sy.frontend.from_onnx(tmp_path / "k.onnx")


# ---- CumSum -----------------------------------------------------------------

def cumsum_reference(x, axis, exclusive, reverse):
    y = np.flip(x, axis) if reverse else x
    total = np.cumsum(y, axis=axis, dtype=np.float64 if x.dtype.kind == "f" else None).astype(x.dtype)
    if exclusive:
        total = np.concatenate([np.zeros_like(np.take(total, [0], axis)), np.take(total, range(x.shape[axis] - 1), axis)],
                               axis)
    return np.flip(total, axis) if reverse else total


@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("reverse", [0, 1])
@pytest.mark.parametrize("axis", [0, 2, -2])
def test_cumsum_matches_numpy(tmp_path, axis, exclusive, reverse):
    x = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    path = save(tmp_path, "CumSum", x, 14, [("axis", np.array(axis, np.int32))], exclusive=exclusive, reverse=reverse)
    (got,) = both_ways(tmp_path, path, x=x)
    np.testing.assert_allclose(got, cumsum_reference(x, axis, exclusive, reverse), rtol=1e-6, atol=1e-6)


def test_cumsum_of_integers_wraps_and_is_fused_with_its_tail(tmp_path):
    x = np.array([[2**31 - 1, 1, 5], [-3, 4, -2**31]], np.int32)
    path = save(tmp_path, "CumSum", x, 11, [("axis", np.array([1], np.int64))])
    (got,) = both_ways(tmp_path, path, x=x)
    np.testing.assert_array_equal(got, cumsum_reference(x, 1, 0, 0))  # NumPy's int32 cumsum wraps too
    node = helper.make_node("CumSum", ["x", "axis"], ["c"], name="node")
    relu = helper.make_node("Relu", ["c"], ["y"], name="relu")
    x = RNG.standard_normal((2, 9)).astype(np.float32)
    graph = helper.make_graph([node, relu], "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.array(1, np.int64), "axis")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), str(tmp_path / "relu.onnx"))
    (got,) = both_ways(tmp_path / "relu", tmp_path / "relu.onnx", x=x)
    np.testing.assert_allclose(got, np.maximum(cumsum_reference(x, 1, 0, 0), 0), rtol=1e-6, atol=1e-6)


def test_cumsum_refusals_name_the_node(tmp_path):
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    cases = [
        (save(tmp_path, "CumSum", x, 14, [("axis", np.array(2, np.int64))]), "axis 2 is out of range for rank 2"),
        (save(tmp_path, "CumSum", x, 14, [("axis", np.array(1.0, np.float32))]), "axis must be an integer"),
        (save(tmp_path, "CumSum", x.astype(bool), 14, [("axis", np.array(0, np.int64))]),
         "needs a numeric input, got bool"),
    ]
    for path, message in cases:
        with pytest.raises(sy.Error, match=r"node 'node' \(CumSum\): " + message):
            sy.frontend.from_onnx(path)


# ---- ONNX backend node cases ------------------------------------------------

NODE_DATA = pathlib.Path("/usr/share/libonnx-testdata/data/node")
CASES = sorted(d.name for pattern in ("test_top_k*", "test_cumsum*") for d in NODE_DATA.glob(pattern))


@pytest.mark.skipif(not CASES, reason="ONNX's backend test data (libonnx-testdata) is not installed")
@pytest.mark.parametrize("case", CASES)
def test_onnx_backend_cases(tmp_path, case):
    """As shipped, TopK's k and CumSum's axis are graph inputs, which must be
    known at import: refused; made initializers, each case matches."""
    folder = NODE_DATA / case / "test_data_set_0"
    model = onnx.load(str(NODE_DATA / case / "model.onnx"))
    feeds = {i.name: numpy_helper.to_array(onnx.load_tensor(str(folder / f"input_{n}.pb")))
             for n, i in enumerate(model.graph.input)}
    wants = [numpy_helper.to_array(onnx.load_tensor(str(folder / f"output_{n}.pb")))
             for n in range(len(model.graph.output))]
    # CumSum's cases are of float64, run as they are.
    second = model.graph.input[1].name
    onnx.save(model, str(tmp_path / "as_is.onnx"))
    with pytest.raises(sy.Error, match="must be known at import"):
        sy.frontend.from_onnx(tmp_path / "as_is.onnx")
    model.graph.initializer.append(numpy_helper.from_array(feeds.pop(second), second))
    onnx.save(model, str(tmp_path / "frozen.onnx"))
    for got, want in zip(both_ways(tmp_path, tmp_path / "frozen.onnx", **feeds), wants, strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-15 if want.dtype == np.float64 else 1e-6)
