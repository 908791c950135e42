# The ONNX converters of the window functions (converters_signal.cc),
# ReverseSequence (converters_reorder.cc) and Det (converters_linalg.cc):
# one-node models against PyTorch and NumPy through the interpreter and a
# compiled artifact, on edge values, and each refusal with its message.
import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

import switchyard as sy

RNG = np.random.default_rng(31)


def element_type(dtype):
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]


def save(tmp_path, op, inputs, opset, inits=(), **attrs):
    names = list(inputs) + [name for name, _ in inits]
    node = helper.make_node(op, names, ["y"], name="node", **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(n, element_type(v.dtype), v.shape) for n, v in inputs.items()],
        [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)],
        [numpy_helper.from_array(v, n) for n, v in inits])
    path = tmp_path / f"{op}_{len(list(tmp_path.glob('*.onnx')))}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), str(path))
    return path


def interpret(path, **inputs):
    return sy.evaluate(sy.frontend.from_onnx(path), **inputs)


def compiled(tmp_path, path, **inputs):
    artifact = tmp_path / f"artifact_{len(list(tmp_path.glob('artifact_*')))}"
    sy.build(sy.frontend.from_onnx(path), ["cpu:0"], artifact)
    return sy.runtime.load(artifact).run(**inputs)


# ---- windows -----------------------------------------------------------------

WINDOWS = {"HannWindow": lambda n, p: torch.hann_window(n, p, dtype=torch.float64),
           "HammingWindow": lambda n, p: torch.hamming_window(n, p, alpha=25 / 46, beta=21 / 46, dtype=torch.float64),
           "BlackmanWindow": lambda n, p: torch.blackman_window(n, p, dtype=torch.float64)}


ONE_ELEMENT = {"HannWindow": 0.0, "HammingWindow": 4 / 46, "BlackmanWindow": 0.0}


@pytest.mark.parametrize("op", sorted(WINDOWS))
@pytest.mark.parametrize("periodic", [1, 0])
@pytest.mark.parametrize("size", [1, 2, 7, 64])
def test_window_matches_torch(tmp_path, op, periodic, size):
    if size == 1 and not periodic:
        return test_symmetric_window_of_one_is_refused(tmp_path, op)
    path = save(tmp_path, op, {}, 17, [("size", np.array(size, np.int32))], periodic=periodic, output_datatype=11)
    got = interpret(path)
    assert got.dtype == np.float64 and got.shape == (size,)
    # torch makes every window of one element [1]; ONNX's cosine sum gives a0 - a1 + a2 at n = 0.
    want = WINDOWS[op](size, bool(periodic)).numpy() if size > 1 else [ONE_ELEMENT[op]]
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_symmetric_window_of_one_is_refused(tmp_path, op="HannWindow"):
    path = save(tmp_path, op, {}, 17, [("size", np.array(1, np.int64))], periodic=0)
    with pytest.raises(sy.Error, match=r"a symmetric window of size 1 divides by zero"):
        sy.frontend.from_onnx(path)


def test_window_size_from_data_is_refused(tmp_path):
    path = save(tmp_path, "HannWindow", {"size": np.array(4, np.int64)}, 17)
    with pytest.raises(sy.Error, match=r"node 'node' \(HannWindow\): input 0 \('size', the size\) must be known at import"):
        sy.frontend.from_onnx(path)


# ---- ReverseSequence -----------------------------------------------------------

def numpy_reverse_sequence(x, lengths, time_axis):
    y = x.copy()
    for b, n in enumerate(lengths):
        if time_axis == 0:
            y[:n, b] = x[:n, b][::-1]
        else:
            y[b, :n] = x[b, :n][::-1]
    return y


@pytest.mark.parametrize("time_axis", [0, 1])
def test_reverse_sequence_matches_numpy(tmp_path, time_axis):
    x = RNG.standard_normal((5, 4, 3) if time_axis == 0 else (4, 5, 3)).astype(np.float32)
    lengths = np.array([0, 1, 5, 3], np.int64)  # none, one step, all, some
    path = save(tmp_path, "ReverseSequence", {"x": x, "lengths": lengths}, 10, time_axis=time_axis,
                batch_axis=1 - time_axis)
    want = numpy_reverse_sequence(x, lengths, time_axis)
    np.testing.assert_array_equal(interpret(path, x=x, lengths=lengths), want)
    np.testing.assert_array_equal(compiled(tmp_path, path, x=x, lengths=lengths), want)


def test_reverse_sequence_length_outside_the_time_axis_fails_the_run(tmp_path):
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    path = save(tmp_path, "ReverseSequence", {"x": x, "lengths": np.array([1, 2], np.int64)}, 10)
    for bad in ([5, 1], [-1, 2]):
        with pytest.raises(sy.Error, match="out of range"):
            interpret(path, x=x, lengths=np.array(bad, np.int64))
        with pytest.raises(sy.Error, match="out of range"):
            compiled(tmp_path, path, x=x, lengths=np.array(bad, np.int64))


def test_reverse_sequence_refuses_other_axes(tmp_path):
    x = np.zeros((2, 2, 2), np.float32)
    path = save(tmp_path, "ReverseSequence", {"x": x, "lengths": np.array([1, 2], np.int64)}, 10, batch_axis=2)
    with pytest.raises(sy.Error, match="batch_axis and time_axis must be 0 and 1 in either order, got 2 and 0"):
        sy.frontend.from_onnx(path)


# ---- Det ---------------------------------------------------------------------

@pytest.mark.parametrize("size", [1, 2, 3, 4])
def test_det_matches_numpy(tmp_path, size):
    x = RNG.standard_normal((2, 3, size, size)).astype(np.float32)
    x[0, 0] = np.eye(size)  # 1
    x[0, 1, :, 0] = x[0, 1, :, -1]  # singular (for size > 1): 0
    x[1, 2] *= 10
    path = save(tmp_path, "Det", {"x": x}, 11)
    want = np.linalg.det(x.astype(np.float64))
    np.testing.assert_allclose(interpret(path, x=x), want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    if size == 3:
        np.testing.assert_allclose(compiled(tmp_path, path, x=x), want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_det_of_large_or_non_square_matrices_is_refused(tmp_path):
    path = save(tmp_path, "Det", {"x": np.zeros((5, 5), np.float32)}, 11)
    with pytest.raises(sy.Error, match=r"node 'node' \(Det\): matrices of 5x5 are not supported \(1x1 to 4x4 are\)"):
        sy.frontend.from_onnx(path)
    path = save(tmp_path, "Det", {"x": np.zeros((2, 3), np.float32)}, 11)
    with pytest.raises(sy.Error, match=r"square matrices"):
        sy.frontend.from_onnx(path)


# ---- MaxUnpool -----------------------------------------------------------------

def pooled_with_onnx_indices(x, kernel, stride, padding):
    """MaxPool's values and Indices as ONNX counts them: into the whole
    tensor (torch counts within each (n, c) plane)."""
    values, indices = torch.nn.functional.max_pool2d(torch.from_numpy(x), kernel, stride, padding, return_indices=True)
    n, c, h, w = x.shape
    planes = np.arange(n * c, dtype=np.int64).reshape(n, c, 1, 1) * h * w
    return values.numpy(), indices.numpy() + planes, indices


@pytest.mark.parametrize("kernel,stride,padding", [(2, 2, 0), (3, 2, 1), (3, 1, 0), (2, 3, 0)])
def test_max_unpool_inverts_max_pool_as_torch(tmp_path, kernel, stride, padding):
    x = RNG.standard_normal((2, 3, 7, 6)).astype(np.float32)
    x[0, 0] = 1.0  # ties: the first in each window
    values, indices, torch_indices = pooled_with_onnx_indices(x, kernel, stride, padding)
    path = save(tmp_path, "MaxUnpool", {"v": values, "i": indices}, 11, [("shape", np.array(x.shape, np.int64))],
                kernel_shape=[kernel] * 2, strides=[stride] * 2, pads=[padding] * 4)
    want = torch.nn.functional.max_unpool2d(torch.from_numpy(values), torch_indices, kernel, stride, padding,
                                            output_size=x.shape[2:]).numpy()
    np.testing.assert_array_equal(interpret(path, v=values, i=indices), want)
    if kernel == 3 and stride == 2:
        np.testing.assert_array_equal(compiled(tmp_path, path, v=values, i=indices), want)


def test_max_unpool_default_shape_and_indices_outside_their_window(tmp_path):
    x = RNG.standard_normal((1, 2, 4, 4)).astype(np.float32)
    values, indices, _ = pooled_with_onnx_indices(x, 2, 2, 0)
    path = save(tmp_path, "MaxUnpool", {"v": values, "i": indices}, 9, kernel_shape=[2, 2], strides=[2, 2])
    got = interpret(path, v=values, i=indices)
    assert got.shape == (1, 2, 4, 4)
    np.testing.assert_array_equal(got, np.where(got != 0, x, 0))
    np.testing.assert_array_equal(np.sort(got[got != 0]), np.sort(values.ravel()))
    other_plane, other_window = indices.copy(), indices.copy()
    other_plane[0, 1, 0, 0] = 0
    other_window[0, 0, 0, 0] = indices[0, 0, 1, 1]
    for bad in (other_plane, other_window):
        for run in (lambda: interpret(path, v=values, i=bad), lambda: compiled(tmp_path, path, v=values, i=bad)):
            with pytest.raises(sy.Error, match="out of range"):
                run()


def test_max_unpool_refusals(tmp_path):
    v = np.zeros((1, 1, 2, 2), np.float32)
    i = np.zeros((1, 1, 2, 2), np.int64)
    path = save(tmp_path, "MaxUnpool", {"v": v, "i": i, "shape": np.array([1, 1, 4, 4], np.int64)}, 11,
                kernel_shape=[2, 2], strides=[2, 2])
    with pytest.raises(sy.Error, match=r"node 'node' \(MaxUnpool\): input 2 \('shape', the output_shape\) must be known"):
        sy.frontend.from_onnx(path)
    path = save(tmp_path, "MaxUnpool", {"v": np.zeros((1, 1, 2), np.float32), "i": np.zeros((1, 1, 2), np.int64)}, 11,
                kernel_shape=[2])
    with pytest.raises(sy.Error, match=r"only 2-D pools"):
        sy.frontend.from_onnx(path)
