# The ONNX converters of GridSample and RoiAlign (converters_sampling.cc):
# one-node models against PyTorch's grid_sample and torchvision's roi_align
# through the interpreter and a compiled artifact, at coordinates on and
# past the image's edges, and each refusal with its message.
import numpy as np
import onnx
import pytest
import torch
from onnx import helper, numpy_helper

import switchyard as sy

RNG = np.random.default_rng(23)


def element_type(dtype):
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]


def save(tmp_path, op, inputs, opset, inits=(), **attrs):
    """A one-node model of graph inputs `inputs` (name -> array), then initializers."""
    names = list(inputs) + [name for name, _ in inits]
    node = helper.make_node(op, names, ["y"], name="node", **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(n, element_type(v.dtype), v.shape) for n, v in inputs.items()],
        [helper.make_tensor_value_info("y", onnx.TensorProto.UNDEFINED, None)],
        [numpy_helper.from_array(v, n) for n, v in inits])
    path = tmp_path / f"{op}_{opset}_{len(list(tmp_path.glob('*.onnx')))}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), str(path))
    return path


def interpret(path, **inputs):
    return sy.evaluate(sy.frontend.from_onnx(path), **inputs)


def compiled(tmp_path, path, **inputs):
    sy.build(sy.frontend.from_onnx(path), ["cpu:0"], tmp_path / "artifact")
    return sy.runtime.load(tmp_path / "artifact").run(**inputs)


def close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


# ---- GridSample -------------------------------------------------------------

def sampling_grid(n, h, w):
    """Random points in and past [-1, 1], plus the corners, the edges, the
    pixel centres and points far outside (several reflections)."""
    special = np.array([-1, 1, 0, -1.5, 1.5, -3.2, 3.7, -1 / 3, 1 / 3, 0.2, -0.2, 7.0], np.float32)
    grid = RNG.uniform(-1.4, 1.4, (n, h, w, 2)).astype(np.float32)
    flat = grid.reshape(-1, 2)
    k = len(special)
    flat[:k * k] = np.stack(np.meshgrid(special, special), -1).reshape(-1, 2)[:len(flat)]
    return grid


def torch_grid_sample(x, grid, mode, padding, align):
    return torch.nn.functional.grid_sample(torch.from_numpy(x), torch.from_numpy(grid), mode=mode,
                                           padding_mode=padding, align_corners=bool(align)).numpy()


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [0, 1])
def test_grid_sample_matches_torch(tmp_path, mode, padding, align):
    x = RNG.standard_normal((2, 3, 5, 4)).astype(np.float32)
    grid = sampling_grid(2, 12, 13)
    path = save(tmp_path, "GridSample", {"x": x, "grid": grid}, 16, mode=mode, padding_mode=padding,
                align_corners=align)
    close(interpret(path, x=x, grid=grid), torch_grid_sample(x, grid, mode, padding, align))


@pytest.mark.parametrize("mode,padding,align", [("bilinear", "zeros", 0), ("nearest", "border", 1),
                                                ("bicubic", "reflection", 0)])
def test_grid_sample_compiled_matches_torch(tmp_path, mode, padding, align):
    x = RNG.standard_normal((1, 2, 4, 6)).astype(np.float32)
    grid = sampling_grid(1, 13, 12)
    path = save(tmp_path, "GridSample", {"x": x, "grid": grid}, 16, mode=mode, padding_mode=padding,
                align_corners=align)
    close(compiled(tmp_path, path, x=x, grid=grid), torch_grid_sample(x, grid, mode, padding, align))


def test_grid_sample_20_names_linear_and_cubic(tmp_path):
    x = RNG.standard_normal((1, 1, 3, 3)).astype(np.float64)
    grid = sampling_grid(1, 12, 12).astype(np.float64)
    for onnx_mode, torch_mode in [("linear", "bilinear"), ("cubic", "bicubic")]:
        path = save(tmp_path, "GridSample", {"x": x, "grid": grid}, 20, mode=onnx_mode, align_corners=1)
        close(interpret(path, x=x, grid=grid), torch_grid_sample(x, grid, torch_mode, "zeros", 1))
    path = save(tmp_path, "GridSample", {"x": x, "grid": grid}, 20, mode="bilinear")
    with pytest.raises(sy.Error, match="mode 'bilinear' is not one of linear, nearest, cubic"):
        sy.frontend.from_onnx(path)


def test_grid_sample_of_one_pixel_reflects_to_it(tmp_path):
    x = np.full((1, 1, 1, 1), 2.5, np.float32)
    grid = sampling_grid(1, 12, 12)
    for align in (0, 1):
        path = save(tmp_path, "GridSample", {"x": x, "grid": grid}, 16, padding_mode="reflection",
                    align_corners=align)
        close(interpret(path, x=x, grid=grid), torch_grid_sample(x, grid, "bilinear", "reflection", align))


def test_grid_sample_refusals(tmp_path):
    x = np.zeros((1, 1, 2, 2, 2), np.float32)
    grid = np.zeros((1, 2, 2, 2, 3), np.float32)
    with pytest.raises(sy.Error, match=r"node 'node' \(GridSample\): only 2-D images"):
        sy.frontend.from_onnx(save(tmp_path, "GridSample", {"x": x, "grid": grid}, 20))
    x = np.zeros((1, 1, 2, 2), np.float32)
    bad_grid = np.zeros((1, 2, 2, 3), np.float32)
    with pytest.raises(sy.Error, match=r"the grid must be \(N, H_out, W_out, 2\)"):
        sy.frontend.from_onnx(save(tmp_path, "GridSample", {"x": x, "grid": bad_grid}, 16))
    grid = np.zeros((1, 2, 2, 2), np.float32)
    with pytest.raises(sy.Error, match="padding_mode 'wrap' is not one of zeros, border, reflection"):
        sy.frontend.from_onnx(save(tmp_path, "GridSample", {"x": x, "grid": grid}, 16, padding_mode="wrap"))
    with pytest.raises(sy.Error, match="GridSample is not in opset 15"):
        sy.frontend.from_onnx(save(tmp_path, "GridSample", {"x": x, "grid": grid}, 15))
