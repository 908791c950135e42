# ONNX's windows over three spatial axes (N, C, D, H, W): Conv,
# ConvTranspose, MaxPool, AveragePool and GlobalAveragePool, which the
# importer writes as the IR's 2-D window operators. PyTorch's 3-D layers
# exported to ONNX, run by the interpreter and compiled, against PyTorch;
# ONNX's backend node cases of 3-D windows; and torchvision's video
# ResNets (r3d_18, mc3_18, r2plus1d_18) compiled end to end.
import os
import pathlib
import re
import subprocess

import numpy as np
import onnx
import pytest
import torch
from onnx import numpy_helper

import switchyard as sy

RNG = np.random.default_rng(36)
NODE_DATA = pathlib.Path("/usr/share/libonnx-testdata/data/node")
REPO = pathlib.Path(__file__).resolve().parents[2]
SWITCHYARD = pathlib.Path(os.environ.get("SY_BUILD_DIR", REPO / "build")) / "bin" / "switchyard"


def random(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def export(module, x, path):
    torch.manual_seed(0)
    with torch.no_grad():
        for p in module.parameters():  # weights of either sign and a spread of sizes
            p.copy_(torch.from_numpy(random(*p.shape)) * 0.5)
    module.eval()
    torch.onnx.export(module, torch.from_numpy(x), str(path), input_names=["x"], output_names=["y"], opset_version=13)
    with torch.no_grad():
        return module(torch.from_numpy(x)).numpy()


def interpreted_and_compiled(tmp_path, path, x):
    mod = sy.frontend.from_onnx(path)
    interpreted = np.asarray(sy.evaluate(mod, x=x))
    sy.build(mod, ["cpu:0"], tmp_path / "artifact")
    compiled = sy.runtime.load(tmp_path / "artifact").run(x=x)
    compiled = np.asarray(compiled[0] if isinstance(compiled, (list, tuple)) else compiled)
    return interpreted, compiled


def check_against_pytorch(tmp_path, module, x):
    want = export(module, x, tmp_path / "m.onnx")
    interpreted, compiled = interpreted_and_compiled(tmp_path, tmp_path / "m.onnx", x)
    assert interpreted.shape == want.shape and compiled.shape == want.shape
    np.testing.assert_allclose(interpreted, want, rtol=1e-4, atol=1e-4, err_msg="interpreter")
    np.testing.assert_allclose(compiled, want, rtol=1e-4, atol=1e-4, err_msg="compiled")
    np.testing.assert_allclose(compiled, interpreted, rtol=1e-4, atol=1e-4, err_msg="compiled against interpreter")


CONVOLUTIONS = {
    "plain": dict(in_channels=4, out_channels=6, kernel_size=3),
    "strided_dilated_grouped": dict(in_channels=4, out_channels=6, kernel_size=(3, 2, 3), stride=(2, 1, 2),
                                    padding=(1, 0, 1), dilation=(1, 2, 1), groups=2),
    "spatial_only": dict(in_channels=4, out_channels=5, kernel_size=(1, 3, 3), padding=(0, 1, 1), bias=False),
    "temporal_depthwise": dict(in_channels=4, out_channels=4, kernel_size=(3, 1, 1), padding=(1, 0, 0), groups=4),
}


@pytest.mark.parametrize("name", CONVOLUTIONS)
def test_conv3d_matches_pytorch(tmp_path, name):
    check_against_pytorch(tmp_path, torch.nn.Conv3d(**CONVOLUTIONS[name]), random(2, 4, 5, 7, 6))


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
def test_conv3d_auto_pad_matches_pytorch_on_the_padded_input(tmp_path, auto_pad):
    from onnx import TensorProto, helper
    x, w = random(1, 3, 5, 6, 7), random(4, 3, 2, 3, 2)
    strides = [1, 2, 2]
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="node", auto_pad=auto_pad, strides=strides)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(w, "w")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(tmp_path / "m.onnx"))
    pads = []  # F.pad's order: the last axis first
    for extent, kernel, stride in reversed(list(zip(x.shape[2:], w.shape[2:], strides))):
        total = max(0, (-(-extent // stride) - 1) * stride + kernel - extent)
        small, large = total // 2, total - total // 2
        pads += [small, large] if auto_pad == "SAME_UPPER" else [large, small]
    want = torch.nn.functional.conv3d(torch.nn.functional.pad(torch.from_numpy(x), pads), torch.from_numpy(w),
                                      stride=strides).numpy()
    for got in interpreted_and_compiled(tmp_path, tmp_path / "m.onnx", x):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


TRANSPOSED = {
    "strided_output_padding": dict(in_channels=4, out_channels=3, kernel_size=3, stride=2, padding=1, output_padding=1),
    "grouped_dilated": dict(in_channels=4, out_channels=6, kernel_size=(2, 3, 3), stride=(1, 2, 1), padding=(0, 1, 1),
                            dilation=(2, 1, 1), groups=2),
}


@pytest.mark.parametrize("name", TRANSPOSED)
def test_conv_transpose3d_matches_pytorch(tmp_path, name):
    check_against_pytorch(tmp_path, torch.nn.ConvTranspose3d(**TRANSPOSED[name]), random(2, 4, 3, 5, 4))


POOLS = {
    "max_padded": lambda: torch.nn.MaxPool3d(3, stride=2, padding=1),
    "max_dilated_ceil": lambda: torch.nn.MaxPool3d((2, 3, 2), stride=(1, 2, 2), dilation=(2, 1, 1), ceil_mode=True),
    "average_counting_padding": lambda: torch.nn.AvgPool3d(3, stride=2, padding=1, count_include_pad=True),
    "average_ceil": lambda: torch.nn.AvgPool3d((2, 3, 3), stride=(2, 1, 2), padding=(1, 1, 0), ceil_mode=True,
                                               count_include_pad=False),
    "adaptive_average_to_one": lambda: torch.nn.AdaptiveAvgPool3d(1),
}


@pytest.mark.parametrize("name", POOLS)
def test_pool3d_matches_pytorch(tmp_path, name):
    check_against_pytorch(tmp_path, POOLS[name](), random(2, 3, 6, 8, 8))


CASES = ["test_averagepool_3d_default", "test_maxpool_3d_default", "test_convtranspose_3d"]


@pytest.mark.parametrize("case", CASES)
def test_onnx_node_cases_of_3d_windows(case):
    if not (NODE_DATA / case).is_dir():
        pytest.skip(f"{NODE_DATA / case} is missing (Debian's libonnx-testdata is not installed)")
    folder = NODE_DATA / case / "test_data_set_0"
    model = onnx.load(str(NODE_DATA / case / "model.onnx"))
    inputs = {i.name: numpy_helper.to_array(onnx.load_tensor(str(folder / f"input_{k}.pb")))
              for k, i in enumerate(model.graph.input)}
    want = numpy_helper.to_array(onnx.load_tensor(str(folder / "output_0.pb")))
    got = np.asarray(sy.evaluate(sy.frontend.from_onnx(NODE_DATA / case / "model.onnx"), **inputs))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_window_attributes_that_do_not_fit_the_input_are_refused_naming_the_node(tmp_path):
    from onnx import TensorProto, helper
    cases = [
        ("MaxPool", (1, 2, 4, 4, 4), None, dict(kernel_shape=[2, 2]),
         "kernel_shape (2, 2) has 2 entries, but the input has 3 spatial axes"),
        ("AveragePool", (1, 1, 3, 3, 3, 3), None, dict(kernel_shape=[2, 2, 2, 2]),
         "4-D windows are not supported (only 1-D, 2-D and 3-D)"),
        ("Conv", (1, 2, 4, 4, 4), random(3, 2, 2, 2), {}, "the weight's rank 4 is not the input's 5"),
        ("Conv", (1, 2, 4, 4, 4), random(3, 2, 2, 2, 2), dict(pads=[1, 1, 1, 1]),
         "strides, dilations and pads must have one entry (pads two) per spatial axis"),
        ("ConvTranspose", (1, 1, 2, 2, 2, 2), random(1, 1, 2, 2, 2, 2), {},
         "only 1-D, 2-D and 3-D transposed convolutions (N, C, spatial...) are supported"),
        ("Conv", (1, 2, 2, 4, 4), random(3, 2, 3, 2, 2), {}, "the window's depth extent 3 is larger than the padded"),
    ]
    for i, (op, shape, weight, attrs, message) in enumerate(cases):
        inputs = ["x"] + (["w"] if weight is not None else [])
        node = helper.make_node(op, inputs, ["y"], name="node", **attrs)
        inits = [numpy_helper.from_array(weight, "w")] if weight is not None else []
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
        path = tmp_path / f"{i}.onnx"
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
        with pytest.raises(sy.ParseError) as caught:
            sy.frontend.from_onnx(path)
        assert f"node 'node' ({op})" in str(caught.value) and message in str(caught.value), (i, str(caught.value))


@pytest.mark.parametrize("name", ["r3d_18", "mc3_18", "r2plus1d_18"])
def test_torchvision_video_model_compiles_and_matches_pytorch(tmp_path, name):
    torchvision = pytest.importorskip("torchvision")
    model = getattr(torchvision.models.video, name)(weights=None).eval()
    x = random(1, 3, 4, 32, 32)
    torch.onnx.export(model, torch.from_numpy(x), str(tmp_path / "m.onnx"), input_names=["x"], output_names=["y"],
                      opset_version=13)
    with torch.no_grad():
        want = model(torch.from_numpy(x)).numpy()
    mod = sy.frontend.from_onnx(tmp_path / "m.onnx")
    sy.build(mod, ["cpu:0"], tmp_path / "artifact")
    got = np.asarray(sy.runtime.load(tmp_path / "artifact").run(x=x))
    np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-3, atol=1e-3)
    # Every convolution is a oneDNN primitive, none a generated loop.
    convolutions = sum(node.op_type == "Conv" for node in onnx.load(str(tmp_path / "m.onnx")).graph.node)
    report = inspect(tmp_path / "artifact")
    assert "(0 of them a convolution, pool or product no library took)" in report, report
    assert len(re.findall(r"library: oneDNN convolution.*: nn\.conv2d", report)) == convolutions, report


def inspect(artifact):
    result = subprocess.run([str(SWITCHYARD), "inspect", str(artifact)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout
