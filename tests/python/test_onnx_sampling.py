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


# ---- RoiAlign ---------------------------------------------------------------

def roi_boxes():
    """Rois inside, across and past the edges of a 7x9 image, of zero and
    negative size, and one sub-pixel one."""
    return np.array([[0, 0, 8, 6], [-3, -2, 4, 3], [5.5, 4.2, 12, 9], [2, 2, 2, 2], [6, 5, 1, 1],
                     [-4, -4, -1.5, -1.2], [3.3, 1.7, 3.6, 2.1], [0, 0, 2, 2]], np.float32)


def torch_roi_align(x, rois, batch_indices, height, width, ratio, scale, aligned):
    boxes = torch.cat([torch.from_numpy(batch_indices.astype(np.float32))[:, None], torch.from_numpy(rois)], 1)
    from torchvision.ops import roi_align
    return roi_align(torch.from_numpy(x), boxes, (height, width), scale, ratio, aligned).numpy()


@pytest.mark.parametrize("transform", ["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize("ratio,scale", [(2, 1.0), (3, 0.5)])
def test_roi_align_avg_matches_torchvision(tmp_path, transform, ratio, scale):
    x = RNG.standard_normal((2, 3, 7, 9)).astype(np.float32)
    rois = roi_boxes() / scale
    batch = np.array([0, 1, 1, 0, 1, 0, 1, 0], np.int64)
    path = save(tmp_path, "RoiAlign", {"x": x, "rois": rois, "batch": batch}, 16, output_height=3, output_width=4,
                sampling_ratio=ratio, spatial_scale=scale, coordinate_transformation_mode=transform)
    want = torch_roi_align(x, rois, batch, 3, 4, ratio, scale, transform == "half_pixel")
    close(interpret(path, x=x, rois=rois, batch=batch), want)


def test_roi_align_10_is_output_half_pixel_and_compiles(tmp_path):
    x = RNG.standard_normal((2, 2, 7, 9)).astype(np.float32)
    rois = roi_boxes()
    batch = np.array([1, 0, 1, 0, 1, 0, 1, 1], np.int32)
    path = save(tmp_path, "RoiAlign", {"x": x, "rois": rois, "batch": batch}, 10, output_height=2, output_width=3,
                sampling_ratio=2)
    close(compiled(tmp_path, path, x=x, rois=rois, batch=batch),
          torch_roi_align(x, rois, batch, 2, 3, 2, 1.0, False))


def onnxruntime_roi_align_max(x, rois, batch, height, width, ratio):
    """ONNX Runtime's max mode (output_half_pixel): per bin the largest, over
    the samples, of the largest weighted tap (0 for a sample past the image)."""
    _, channels, h, w = x.shape
    out = np.zeros((len(rois), channels, height, width), np.float64)
    for r, (x1, y1, x2, y2) in enumerate(rois.astype(np.float64)):
        bin_h, bin_w = max(y2 - y1, 1) / height, max(x2 - x1, 1) / width
        for ph in range(height):
            for pw in range(width):
                best = None
                for iy in range(ratio):
                    for ix in range(ratio):
                        yy = y1 + ph * bin_h + (iy + 0.5) * bin_h / ratio
                        xx = x1 + pw * bin_w + (ix + 0.5) * bin_w / ratio
                        if yy < -1 or yy > h or xx < -1 or xx > w:
                            value = np.zeros(channels)
                        else:
                            yy, xx = min(max(yy, 0), h - 1), min(max(xx, 0), w - 1)
                            y0, x0 = int(yy), int(xx)
                            y1_, x1_ = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
                            ly, lx = yy - y0, xx - x0
                            img = x[batch[r]]
                            value = np.max([img[:, y0, x0] * (1 - ly) * (1 - lx), img[:, y0, x1_] * (1 - ly) * lx,
                                            img[:, y1_, x0] * ly * (1 - lx), img[:, y1_, x1_] * ly * lx], axis=0)
                        best = value if best is None else np.maximum(best, value)
                out[r, :, ph, pw] = best
    return out


def test_roi_align_max_matches_onnxruntime_s_definition(tmp_path):
    x = RNG.standard_normal((2, 3, 7, 9)).astype(np.float32)
    rois = roi_boxes()
    batch = np.array([0, 1, 1, 0, 1, 0, 1, 0], np.int64)
    path = save(tmp_path, "RoiAlign", {"x": x, "rois": rois, "batch": batch}, 16, output_height=3, output_width=2,
                sampling_ratio=2, mode="max", coordinate_transformation_mode="output_half_pixel")
    close(interpret(path, x=x, rois=rois, batch=batch), onnxruntime_roi_align_max(x, rois, batch, 3, 2, 2))


def test_roi_align_batch_index_out_of_range_fails_the_run(tmp_path):
    x = RNG.standard_normal((2, 1, 4, 4)).astype(np.float32)
    rois = np.array([[0, 0, 2, 2]], np.float32)
    path = save(tmp_path, "RoiAlign", {"x": x, "rois": rois, "batch": np.zeros(1, np.int64)}, 16, sampling_ratio=1)
    for bad in (2, -1):
        with pytest.raises(sy.Error, match="out of range"):
            interpret(path, x=x, rois=rois, batch=np.array([bad], np.int64))
        with pytest.raises(sy.Error, match="out of range"):
            compiled(tmp_path, path, x=x, rois=rois, batch=np.array([bad], np.int64))


def test_roi_align_refusals(tmp_path):
    x = np.zeros((1, 1, 4, 4), np.float32)
    rois, batch = np.zeros((2, 4), np.float32), np.zeros(2, np.int64)
    with pytest.raises(sy.Error, match=r"node 'node' \(RoiAlign\): sampling_ratio 0 \(a sample count per roi"):
        sy.frontend.from_onnx(save(tmp_path, "RoiAlign", {"x": x, "rois": rois, "batch": batch}, 16))
    with pytest.raises(sy.Error, match="no rois are not supported"):
        sy.frontend.from_onnx(save(tmp_path, "RoiAlign", {"x": x, "rois": np.zeros((0, 4), np.float32),
                                                          "batch": np.zeros(0, np.int64)}, 16, sampling_ratio=2))
    with pytest.raises(sy.Error, match="attribute 'coordinate_transformation_mode' is not supported"):
        sy.frontend.from_onnx(save(tmp_path, "RoiAlign", {"x": x, "rois": rois, "batch": batch}, 10, sampling_ratio=2,
                                   coordinate_transformation_mode="half_pixel"))
    with pytest.raises(sy.Error, match=r"rois must be \(num_rois, 4\)"):
        sy.frontend.from_onnx(save(tmp_path, "RoiAlign", {"x": x, "rois": np.zeros((2, 5), np.float32),
                                                          "batch": batch}, 16, sampling_ratio=2))
