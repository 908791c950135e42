# The ONNX converters of Pad, Resize, Tile and ConvTranspose (built from
# take, concatenate, broadcast_to, strided_slice and nn.conv2d at import):
# small models against PyTorch, NumPy and ONNX's own reference
# interpolation, every refusal with its message, ONNX's backend node cases
# for these operators, and one model compiled through the backend.
import glob
import os
import pathlib

import numpy as np
import onnx
import pytest
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper
from onnx.backend.test.case.node.resize import cubic_coeffs, interpolate_nd, linear_coeffs, nearest_coeffs

import switchyard as sy

RNG = np.random.default_rng(11)
NODE_DATA = pathlib.Path("/usr/share/libonnx-testdata/data/node")


def random(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def element_type(dtype):
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]  # onnx 1.12 has no helper for it


def run_node(tmp_path, op, x, out_shape, inits=(), extra_inputs=(), opset=13, **attrs):
    """Imports a one-node model (input "x", constants `inits` as
    initializers, runtime inputs `extra_inputs`) and evaluates it."""
    names = ["x"] + [name for name, _ in inits]
    node_inputs = attrs.pop("inputs", names)
    node = helper.make_node(op, node_inputs, ["y"], name="node", **attrs)
    graph_inputs = [helper.make_tensor_value_info("x", element_type(x.dtype), x.shape)]
    graph_inputs += [helper.make_tensor_value_info(n, element_type(v.dtype), v.shape)
                     for n, v in extra_inputs]
    out = helper.make_tensor_value_info("y", element_type(x.dtype), out_shape)
    initializers = [numpy_helper.from_array(v, n) for n, v in inits if n not in dict(extra_inputs)]
    graph = helper.make_graph([node], "g", graph_inputs, [out], initializers)
    path = tmp_path / f"{op}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), str(path))
    mod = sy.frontend.from_onnx(path)
    return sy.evaluate(mod, x=x, **dict(extra_inputs))


def i64(values):
    return np.array(values, np.int64)


# ---- Pad --------------------------------------------------------------------

def onnx_pads_to_numpy(pads, rank):
    return [(pads[a], pads[a + rank]) for a in range(rank)]


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
@pytest.mark.parametrize("pads", [[0, 1, 2, 0, 0, 3, 1, 2], [1, 0, 0, 4, 0, 2, 3, 0], [0, 0, 3, 3, 0, 0, 3, 3]])
def test_pad_modes_match_numpy(tmp_path, mode, pads):
    x = random(2, 3, 4, 5)
    inits = [("pads", i64(pads))]
    if mode == "constant":
        inits.append(("value", np.array(1.5, np.float32)))
    want = np.pad(x, onnx_pads_to_numpy(pads, 4), mode=mode, **({"constant_values": 1.5} if mode == "constant" else {}))
    got = run_node(tmp_path, "Pad", x, want.shape, inits, mode=mode)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mode, torch_mode", [("constant", "constant"), ("reflect", "reflect"), ("edge", "replicate")])
def test_pad_matches_torch(tmp_path, mode, torch_mode):
    x = random(2, 3, 5, 6)
    got = run_node(tmp_path, "Pad", x, None, [("pads", i64([0, 0, 2, 1, 0, 0, 3, 4]))], mode=mode)
    # torch lists (before, after) pairs from the last axis.
    np.testing.assert_array_equal(got, F.pad(torch.from_numpy(x), [1, 4, 2, 3], mode=torch_mode).numpy())


def test_pad_negative_pads_crop_and_wide_reflection(tmp_path):
    x = random(3, 6)
    # Crop two off the start of axis 1 and pad one at its end; crop one row.
    got = run_node(tmp_path, "Pad", x, [4, 5], [("pads", i64([0, -2, 1, 1]))])
    want = np.pad(x[:, 2:], [(0, 1), (0, 1)])
    np.testing.assert_array_equal(got, want)
    got = run_node(tmp_path, "Pad", x, [2, 4], [("pads", i64([-1, -1, 0, -1]))], mode="reflect")
    np.testing.assert_array_equal(got, x[1:, 1:5])
    # Reflection wider than the axis repeats the mirror, as numpy.pad does.
    got = run_node(tmp_path, "Pad", x, [3, 20], [("pads", i64([0, 7, 0, 7]))], mode="reflect")
    np.testing.assert_array_equal(got, np.pad(x, [(0, 0), (7, 7)], mode="reflect"))


def test_pad_integer_data_and_runtime_constant_value(tmp_path):
    x = np.arange(12, dtype=np.int64).reshape(3, 4)
    got = run_node(tmp_path, "Pad", x, [5, 5], [("pads", i64([1, 0, 1, 1])), ("value", np.array(-7, np.int64))])
    np.testing.assert_array_equal(got, np.pad(x, [(1, 1), (0, 1)], constant_values=-7))
    xf = random(2, 2)
    value = np.array(3.25, np.float32)
    got = run_node(tmp_path, "Pad", xf, [2, 4], [("pads", i64([0, 1, 0, 1])), ("value", value)],
                   extra_inputs=[("value", value)])
    np.testing.assert_array_equal(got, np.pad(xf, [(0, 0), (1, 1)], constant_values=3.25))


# ---- Tile -------------------------------------------------------------------

@pytest.mark.parametrize("shape, repeats", [((2, 3), (2, 3)), ((2, 3, 4), (1, 2, 1)), ((5,), (4,)), ((2, 1, 3), (3, 2, 2))])
def test_tile_matches_torch(tmp_path, shape, repeats):
    x = random(*shape)
    want = torch.from_numpy(x).tile(repeats).numpy()
    got = run_node(tmp_path, "Tile", x, want.shape, [("repeats", i64(repeats))])
    np.testing.assert_array_equal(got, want)


# ---- Resize -----------------------------------------------------------------

def resize_inputs(scales=None, sizes=None):
    if scales is not None:
        return {"inits": [("scales", np.array(scales, np.float32))], "inputs": ["x", "", "scales"]}
    return {"inits": [("sizes", i64(sizes))], "inputs": ["x", "", "", "sizes"]}


def run_resize(tmp_path, x, scales=None, sizes=None, **attrs):
    spec = resize_inputs(scales, sizes)
    return run_node(tmp_path, "Resize", x, None, spec["inits"], inputs=spec["inputs"], **attrs)


@pytest.mark.parametrize("size, align", [((7, 9), False), ((3, 2), False), ((8, 8), True), ((3, 7), True)])
def test_resize_linear_matches_torch_bilinear(tmp_path, size, align):
    x = random(2, 3, 5, 4)
    mode = "align_corners" if align else "half_pixel"
    got = run_resize(tmp_path, x, sizes=[2, 3, *size], mode="linear", coordinate_transformation_mode=mode)
    want = F.interpolate(torch.from_numpy(x), size=size, mode="bilinear", align_corners=align).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_resize_nearest_matches_torch(tmp_path):
    x = random(1, 2, 4, 6)
    # torch's "nearest" is ONNX's asymmetric + floor (what torch exports).
    got = run_resize(tmp_path, x, scales=[1, 1, 2, 0.5], mode="nearest",
                     coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    want = F.interpolate(torch.from_numpy(x), scale_factor=(2, 0.5), mode="nearest").numpy()
    np.testing.assert_array_equal(got, want)
    got = run_resize(tmp_path, x, sizes=[1, 2, 7, 5], mode="nearest",
                     coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    np.testing.assert_array_equal(got, F.interpolate(torch.from_numpy(x), size=(7, 5), mode="nearest").numpy())


@pytest.mark.parametrize("coordinates", ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"])
@pytest.mark.parametrize("mode", ["nearest:round_prefer_floor", "nearest:round_prefer_ceil", "nearest:floor",
                                  "nearest:ceil", "linear"])
@pytest.mark.parametrize("target", [{"scales": [1, 1, 1.5, 0.6]}, {"sizes": [1, 2, 7, 1]}, {"sizes": [1, 2, 2, 9]}])
def test_resize_modes_match_onnx_reference(tmp_path, coordinates, mode, target):
    x = random(1, 2, 4, 5)
    kind, _, nearest = mode.partition(":")
    attrs = {"mode": kind, "coordinate_transformation_mode": coordinates}
    if nearest:
        attrs["nearest_mode"] = nearest
    got = run_resize(tmp_path, x, **target, **attrs)
    coeffs = (lambda r: nearest_coeffs(r, mode=nearest)) if nearest else linear_coeffs
    scales = np.array(target["scales"], np.float32) if "scales" in target else None
    want = interpolate_nd(x, coeffs, output_size=target.get("sizes"), scale_factors=scales,
                          coordinate_transformation_mode=coordinates).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("size, align", [((9, 7), False), ((3, 2), False), ((8, 8), True), ((2, 7), True)])
def test_resize_cubic_matches_torch_bicubic(tmp_path, size, align):
    # torch's bicubic: a = -0.75, edge-clamped taps; what it exports as cubic.
    x = random(2, 3, 5, 4)
    mode = "align_corners" if align else "half_pixel"
    got = run_resize(tmp_path, x, sizes=[2, 3, *size], mode="cubic", coordinate_transformation_mode=mode)
    want = F.interpolate(torch.from_numpy(x), size=size, mode="bicubic", align_corners=align).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("coordinates", ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"])
@pytest.mark.parametrize("a, exclude", [(-0.75, 0), (-0.5, 0), (-0.5, 1)])
@pytest.mark.parametrize("target", [{"scales": [1, 1, 1.5, 0.6]}, {"sizes": [1, 2, 7, 2]}, {"sizes": [1, 2, 3, 9]}])
def test_resize_cubic_matches_onnx_reference(tmp_path, coordinates, a, exclude, target):
    x = random(1, 2, 4, 5)
    got = run_resize(tmp_path, x, **target, mode="cubic", coordinate_transformation_mode=coordinates,
                     cubic_coeff_a=a, exclude_outside=exclude)
    scales = np.array(target["scales"], np.float32) if "scales" in target else None
    want = interpolate_nd(x, lambda r: cubic_coeffs(r, A=a), output_size=target.get("sizes"), scale_factors=scales,
                          coordinate_transformation_mode=coordinates, exclude_outside=bool(exclude)).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_resize_any_axis_and_scales_that_keep_the_length(tmp_path, mode):
    # Every axis is resampled the same way, the batch and channels included;
    # a scale of 1.2 on 4 elements keeps 4 but still moves the samples.
    x = random(2, 3, 4, 5)
    for target in ({"sizes": [3, 2, 4, 5]}, {"scales": [1, 1, 1.2, 1]}):
        got = run_resize(tmp_path, x, **target, mode=mode)
        scales = np.array(target["scales"], np.float32) if "scales" in target else None
        want = interpolate_nd(x, {"nearest": nearest_coeffs, "linear": linear_coeffs, "cubic": cubic_coeffs}[mode],
                              output_size=target.get("sizes"), scale_factors=scales).astype(np.float32)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert not np.array_equal(got, x)


def test_resize_other_ranks(tmp_path):
    x = random(2, 3, 6)
    got = run_resize(tmp_path, x, sizes=[2, 3, 11], mode="linear", coordinate_transformation_mode="align_corners")
    want = F.interpolate(torch.from_numpy(x), size=11, mode="linear", align_corners=True).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    v = random(1, 2, 3, 4, 2)
    got = run_resize(tmp_path, v, scales=[1, 1, 2, 1, 3], mode="nearest",
                     coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    want = F.interpolate(torch.from_numpy(v), scale_factor=(2, 1, 3), mode="nearest").numpy()
    np.testing.assert_array_equal(got, want)


# ---- ConvTranspose ----------------------------------------------------------

def run_conv_transpose(tmp_path, x, w, b=None, weight_at_runtime=False, **attrs):
    inits = [("w", w)] + ([("b", b)] if b is not None else [])
    extra = [("w", w)] if weight_at_runtime else []
    return run_node(tmp_path, "ConvTranspose", x, None, inits, extra_inputs=extra, **attrs)


@pytest.mark.parametrize("stride", [1, 2, 3])
@pytest.mark.parametrize("groups, dilation, pads, output_padding", [
    (1, 1, [0, 0, 0, 0], [0, 0]), (2, 1, [1, 0, 2, 1], [0, 0]), (1, 2, [1, 1, 1, 1], [0, 1]),
    (3, 1, [0, 2, 0, 2], [1, 0]), (1, 3, [2, 0, 0, 3], [0, 0])])
def test_conv_transpose_2d_matches_torch(tmp_path, stride, groups, dilation, pads, output_padding):
    if max(output_padding) >= max(stride, dilation):
        pytest.skip("torch needs output_padding below the stride or dilation")
    x, w, b = random(2, 6, 5, 4), random(6, 2, 3, 2), random(2 * groups)  # w: (C, M/groups, KH, KW)
    attrs = dict(strides=[stride, stride], dilations=[dilation, dilation], group=groups, pads=pads,
                 output_padding=output_padding)
    want = F.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b), stride=stride,
                              output_padding=output_padding, groups=groups, dilation=dilation).numpy()
    want = want[:, :, pads[0]:want.shape[2] - pads[2], pads[1]:want.shape[3] - pads[3]]
    for runtime in (False, True):
        got = run_conv_transpose(tmp_path, x, w, b, weight_at_runtime=runtime, **attrs)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_conv_transpose_1d_matches_torch(tmp_path):
    x, w = random(1, 4, 7), random(4, 3, 4)
    got = run_conv_transpose(tmp_path, x, w, strides=[3], pads=[1, 2], output_padding=[2], dilations=[1])
    want = F.conv_transpose1d(torch.from_numpy(x), torch.from_numpy(w), stride=3, padding=0, output_padding=2).numpy()
    np.testing.assert_allclose(got, want[:, :, 1:want.shape[2] - 2], rtol=1e-4, atol=1e-4)


def same_reference(x, w, stride, auto_pad, output_padding=(0, 0)):
    """SAME: the full transposed convolution cut to input * stride, the odd
    one cut at the end for SAME_UPPER and at the start for SAME_LOWER; an
    output too short is lengthened at the end with zeros."""
    full = F.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w), stride=stride,
                              output_padding=output_padding).numpy()
    for axis in (2, 3):
        want, have = x.shape[axis] * stride[axis - 2], full.shape[axis]
        total = have - want
        if total < 0:
            widths = [(0, 0)] * 4
            widths[axis] = (0, -total)
            full = np.pad(full, widths)
            continue
        head = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
        full = np.take(full, np.arange(head, head + want), axis=axis)
    return full


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
@pytest.mark.parametrize("stride, kernel, output_padding", [((2, 2), (3, 3), (0, 0)), ((3, 2), (4, 3), (1, 1)),
                                                            ((3, 3), (2, 1), (0, 0)), ((1, 2), (2, 2), (0, 1))])
def test_conv_transpose_same_auto_pad(tmp_path, auto_pad, stride, kernel, output_padding):
    x, w = random(1, 2, 4, 3), random(2, 3, *kernel)
    got = run_conv_transpose(tmp_path, x, w, strides=list(stride), auto_pad=auto_pad,
                             output_padding=list(output_padding))
    assert got.shape == (1, 3, 4 * stride[0], 3 * stride[1])
    np.testing.assert_allclose(got, same_reference(x, w, stride, auto_pad, output_padding), rtol=1e-4, atol=1e-4)


def test_conv_transpose_output_shape(tmp_path):
    x, w = random(1, 2, 3, 3), random(2, 1, 3, 3)
    full = F.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w), stride=(3, 2)).numpy()  # (1, 1, 9, 7)
    got = run_conv_transpose(tmp_path, x, w, strides=[3, 2], output_shape=[10, 6])
    # Rows: one longer than the full result, lengthened at the end; columns:
    # one too many, cut at the start (pads[start] = total - total / 2).
    want = np.pad(full, [(0, 0), (0, 0), (0, 1), (0, 0)])[:, :, :, 1:]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    # SAME_UPPER cuts the odd one at the end; the full (N, C, H, W) form is accepted too.
    got = run_conv_transpose(tmp_path, x, w, strides=[3, 2], output_shape=[1, 1, 10, 6], auto_pad="SAME_UPPER")
    np.testing.assert_allclose(got, np.pad(full, [(0, 0), (0, 0), (0, 1), (0, 0)])[:, :, :, :6], rtol=1e-4, atol=1e-4)


# ---- Refusals ---------------------------------------------------------------

def refusal(tmp_path, op, x, inits=(), extra_inputs=(), **attrs):
    with pytest.raises(sy.ParseError) as caught:
        run_node(tmp_path, op, x, None, inits, extra_inputs=extra_inputs, **attrs)
    return str(caught.value)


def test_refusals_name_the_node_and_the_reason(tmp_path):
    x = random(1, 1, 4, 4)
    pads = i64([0, 0, 1, 1, 0, 0, 1, 1])
    cases = [
        (dict(op="Pad", inits=[("pads", pads)], extra_inputs=[("pads", pads)]), "the pads) must be known at import"),
        (dict(op="Pad", inits=[("pads", pads)], mode="wrap"), "mode 'wrap' is not one of constant, reflect, edge"),
        (dict(op="Pad", inits=[("pads", i64([0, 0]))]), "pads has 2 entries; a rank-4 input needs 8"),
        (dict(op="Pad", inits=[("pads", i64([0, 0, -2, 0, 0, 0, -2, 0]))]), "leave axis 2 empty"),
        (dict(op="Pad", inits=[("pads", pads), ("value", np.array(1, np.float32))], mode="edge"),
         "constant_value is given, but mode is 'edge'"),
        (dict(op="Tile", inits=[("r", i64([1, 1, 0, 1]))]), "a repeat of 0 gives an empty tensor"),
        (dict(op="Tile", inits=[("r", i64([1, 2]))]), "repeats has 2 entries for a rank-4 input"),
        (dict(op="Tile", inits=[("r", i64([1, 1, 2, 2]))], extra_inputs=[("r", i64([1, 1, 2, 2]))]),
         "the repeats) must be known at import"),
        (dict(op="Resize", inits=[("scales", np.array([1, 1, 2, 2], np.float32))], inputs=["x", "scales"],
              mode="cubic", opset=10),
         "mode 'cubic' is not one of nearest, linear"),
        (dict(op="Resize", **resize_inputs(sizes=[1, 1, 8, 8]), mode="linear",
              coordinate_transformation_mode="tf_crop_and_resize"), "'tf_crop_and_resize' is not supported"),
        (dict(op="Resize", **resize_inputs(sizes=[1, 1, 8, 8]), coordinate_transformation_mode="tf_half_pixel_for_nn"),
         "'tf_half_pixel_for_nn' is not one of"),
        (dict(op="Resize", **resize_inputs(sizes=[1, 1, 8, 8]), nearest_mode="round"), "nearest_mode 'round' is not one of"),
        (dict(op="Resize", **resize_inputs(sizes=[1, 1, 8, 8]), antialias=1), "attribute 'antialias' is not supported"),
        (dict(op="Resize", **resize_inputs(sizes=[1, 1, 8, 8]), exclude_outside=1),
         "exclude_outside=1 is not supported with mode 'nearest'"),
        (dict(op="Resize", **resize_inputs(scales=[1, 1, 2, 2]), extra_inputs=[("scales", np.ones(4, np.float32))]),
         "the scales) must be known at import"),
        (dict(op="Resize", inits=[("scales", np.ones(4, np.float32)), ("sizes", i64([1, 1, 2, 2]))],
              inputs=["x", "", "scales", "sizes"]), "exactly one of scales and sizes must be given"),
        (dict(op="Resize", **resize_inputs(sizes=[1, 1, 0, 2])), "axis 2 is empty"),
        (dict(op="Resize", **resize_inputs(sizes=[1, 8])), "sizes must have one entry per input dimension (4)"),
        (dict(op="ConvTranspose", inits=[("w", random(1, 2, 3, 3))], group=2), "group 2 does not divide the 1 input"),
        (dict(op="ConvTranspose", inits=[("w", random(1, 2, 3, 3))], pads=[4, 4, 4, 4]), "the pads leave an empty output"),
        (dict(op="ConvTranspose", inits=[("w", random(1, 2, 3, 3))], auto_pad="SAME"), "auto_pad 'SAME' is not one of"),
    ]
    for i, (spec, message) in enumerate(cases):
        spec = dict(spec)
        op = spec.pop("op")
        text = refusal(tmp_path, op, x, spec.pop("inits", ()), spec.pop("extra_inputs", ()), **spec)
        assert f"node 'node' ({op})" in text and message in text, (i, text)
    text = refusal(tmp_path, "ConvTranspose", random(1, 1, 2, 2, 2, 2), [("w", random(1, 1, 2, 2, 2, 2))])
    assert "only 1-D, 2-D and 3-D transposed convolutions (N, C, spatial...) are supported" in text
    text = refusal(tmp_path, "Resize", np.ones((1, 1, 2, 2), np.int32), **resize_inputs(sizes=[1, 1, 4, 4]), mode="linear")
    assert "linear mode needs a floating-point input" in text
    text = refusal(tmp_path, "Resize", np.ones((1, 1, 2, 2), np.int32), **resize_inputs(sizes=[1, 1, 4, 4]), mode="cubic")
    assert "cubic mode needs a floating-point input" in text


# ---- ONNX backend node cases ------------------------------------------------

CASES = sorted(os.path.basename(d) for pattern in ("test_pad", "test_constant_pad", "test_reflect_pad", "test_edge_pad",
                                                   "test_resize_*", "test_tile*", "test_convtranspose*")
               for d in glob.glob(str(NODE_DATA / pattern)))  # none (so skipped) without libonnx-testdata


def case_data(case):
    folder = NODE_DATA / case / "test_data_set_0"
    load = lambda kind: [numpy_helper.to_array(onnx.load_tensor(str(folder / f"{kind}_{i}.pb")))
                         for i in range(len(list(folder.glob(f"{kind}_*.pb"))))]
    return onnx.load(str(NODE_DATA / case / "model.onnx")), load("input"), load("output")


def import_and_compare(path, feeds, outputs):
    """'pass' or 'refused: ...'; a wrong answer or any other error fails."""
    try:
        mod = sy.frontend.from_onnx(path)
    except sy.ParseError as e:
        assert str(e).strip(), "a refusal without a message"
        return "refused"
    got = sy.evaluate(mod, **feeds)
    got = list(got) if isinstance(got, (list, tuple)) else [got]
    for g, want in zip(got, outputs, strict=True):
        assert g.shape == want.shape
        np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-4 * max(float(np.abs(want).max()), 1e-30))
    return "pass"


@pytest.mark.parametrize("variant", ["as_is", "constants_frozen"])
@pytest.mark.parametrize("case", CASES)
def test_onnx_backend_cases(tmp_path, case, variant):
    """As shipped, the shape-like inputs (pads, scales, sizes, repeats) are
    graph inputs, which a static-shape compiler must refuse; frozen, they
    are initializers and the converters run. ConvTranspose's second input
    is its weight, so its cases (at opsets 8 and 11) run as shipped too."""
    model, inputs, outputs = case_data(case)
    names = [i.name for i in model.graph.input]
    feeds = dict(zip(names, inputs))
    if variant == "constants_frozen":
        for name in names[1:]:
            model.graph.initializer.append(numpy_helper.from_array(feeds.pop(name), name))
    onnx.save(model, str(tmp_path / "model.onnx"))
    status = import_and_compare(tmp_path / "model.onnx", feeds, outputs)
    supported = (variant == "constants_frozen" or case.startswith("test_convtranspose")) and not any(
        s in case for s in ("tf_crop_and_resize",))
    assert status == ("pass" if supported else "refused"), status


# ---- Through the backend ----------------------------------------------------

def test_conv_transpose_and_resize_compile_and_match_the_interpreter(tmp_path):
    x = random(1, 4, 5, 6)
    w, b = random(4, 3, 3, 3), random(3)
    nodes = [helper.make_node("ConvTranspose", ["x", "w", "b"], ["up"], name="deconv", strides=[2, 2], pads=[1, 1, 0, 1],
                              output_padding=[1, 0]),
             helper.make_node("Resize", ["up", "", "", "sizes"], ["y"], name="resize", mode="linear"),
             helper.make_node("Pad", ["y", "pads"], ["z"], name="pad", mode="reflect")]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
             numpy_helper.from_array(i64([1, 3, 7, 15]), "sizes"), numpy_helper.from_array(i64([0, 0, 1, 2, 0, 0, 1, 0]), "pads")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(tmp_path / "m.onnx"))
    mod = sy.frontend.from_onnx(tmp_path / "m.onnx")
    expected = sy.evaluate(mod, x=x)
    up = F.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b), stride=2, output_padding=(1, 0))
    up = up[:, :, 1:, 1:-1]
    want = np.pad(F.interpolate(up, size=(7, 15), mode="bilinear").numpy(), [(0, 0), (0, 0), (1, 1), (2, 0)],
                  mode="reflect")
    np.testing.assert_allclose(expected, want, rtol=1e-4, atol=1e-4)
    sy.build(mod, ["cpu:0"], tmp_path / "artifact")
    got = sy.runtime.load(tmp_path / "artifact").run(x=x)
    got = got[0] if isinstance(got, (list, tuple)) else got
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
