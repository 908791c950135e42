"""The Winograd convolution in compiled models: which convolutions the
compiler gives it (3x3, stride 1, constant weights, blocked activations,
enough tiles) and that an artifact using it computes what the interpreter
does, on one device and split across two."""
import json

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import switchyard as sy


def conv(name, x, w, b, out, strides=(1, 1), pads=(1, 1, 1, 1)):
    return helper.make_node("Conv", [x, w, b], [out], name=name, kernel_shape=[3, 3], strides=list(strides),
                            pads=list(pads))


def residual_model(tmp_path):
    """x[1,3,30,26] -> stem conv (stride 2: blocked from here) -> conv+relu -> conv + stem -> relu
    -> stride-2 conv -> conv (8x7: too few tiles) -> conv with weights given at run time -> y."""
    rng = np.random.default_rng(0)
    weights = {}
    for name, shape in [("ws", (16, 3, 3, 3)), ("w0", (16, 16, 3, 3)), ("w1", (16, 16, 3, 3)), ("w2", (24, 16, 3, 3)), ("w3", (24, 24, 3, 3))]:
        weights[name] = numpy_helper.from_array((rng.standard_normal(shape) * 0.2).astype(np.float32), name)
        bias = "b" + name[1]
        weights[bias] = numpy_helper.from_array(rng.standard_normal(shape[0]).astype(np.float32), bias)
    nodes = [conv("stem/conv", "x", "ws", "bs", "stem", strides=(2, 2)),
             conv("block/conv0", "stem", "w0", "b0", "c0"),
             helper.make_node("Relu", ["c0"], ["r0"], name="block/relu0"),
             conv("block/conv1", "r0", "w1", "b1", "c1"),
             helper.make_node("Add", ["c1", "stem"], ["s1"], name="block/add"),
             helper.make_node("Relu", ["s1"], ["r1"], name="block/relu1"),
             conv("down/conv", "r1", "w2", "b2", "c2", strides=(2, 2)),
             conv("small/conv", "c2", "w3", "b3", "c3"),
             conv("computed/conv", "c3", "wx", "b3", "y")]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 30, 26]),
         helper.make_tensor_value_info("wx", TensorProto.FLOAT, [24, 24, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 24, 8, 7])], list(weights.values()))
    path = tmp_path / "residual.onnx"
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    return path


def algorithms(manifest_path):
    """The convolution algorithm of each kernel, by the span of its first operator."""
    manifest = json.loads(manifest_path.read_text())
    found = {}
    for kernel in manifest["kernels"]:
        if "primitive" in kernel:
            primitive = manifest["primitives"][kernel["primitive"]]
            if primitive["kind"] == "convolution":
                found[kernel["span"].split(",")[0].removeprefix("fused(")] = primitive["algorithm"]
    return found


def onednn_padded_dims(layout):
    """The padded dims of a weight layout written "onednn dims=... padded=a,b,c,d ..."."""
    fields = dict(field.split("=", 1) for field in layout.split(" ")[1:])
    return [int(d) for d in fields["padded"].split(",")]


def test_winograd_runs_where_it_pays_and_matches_the_interpreter(tmp_path):
    mod = sy.frontend.from_onnx(residual_model(tmp_path))
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 3, 30, 26)).astype(np.float32)
    wx = (rng.standard_normal((24, 24, 3, 3)) * 0.2).astype(np.float32)
    expected = np.asarray(sy.evaluate(mod, x=x, wx=wx))

    sy.build(mod, ["cpu:0"], tmp_path / "one")
    found = algorithms(tmp_path / "one" / "manifest.json")
    assert found == {"stem/conv": "convolution_direct", "block/conv0": "convolution_winograd", "block/conv1": "convolution_winograd",
                     "down/conv": "convolution_direct", "small/conv": "convolution_direct",
                     "computed/conv": "convolution_direct"}, found
    actual = np.asarray(sy.runtime.load(tmp_path / "one").run(x=x, wx=wx))
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    # The compiler stored the constant weights in the layouts the primitives read (biases stay plain).
    weights = json.loads((tmp_path / "one" / "manifest.json").read_text())["weights"]
    prepared = sorted((w["shape"], w.get("prepared", "").split(" ")[0], w["nbytes"]) for w in weights if len(w["shape"]) == 4)
    # oneDNN pads output and input channels to its blocks (8 on AVX2, 16 on AVX-512): the padded dims are in the layout.
    onednn = sorted((w for w in weights if w.get("prepared", "").startswith("onednn ")), key=lambda w: w["shape"])
    padded = [onednn_padded_dims(w["prepared"]) for w in onednn]
    assert prepared == [([16, 3, 3, 3], "onednn", 4 * int(np.prod(padded[0]))),
                        ([16, 16, 3, 3], "winograd_f4x4_3x3", 36 * 16 * 16 * 4),
                        ([16, 16, 3, 3], "winograd_f4x4_3x3", 36 * 16 * 16 * 4),
                        ([24, 16, 3, 3], "onednn", 4 * int(np.prod(padded[1]))),
                        ([24, 24, 3, 3], "onednn", 4 * int(np.prod(padded[2])))], prepared
    for w, dims in zip(onednn, padded):
        assert all(p >= d for p, d in zip(dims, w["shape"])) and np.prod(dims) < 2 * np.prod(w["shape"]), w["prepared"]
    assert all("prepared" not in w for w in weights if len(w["shape"]) == 1)

    # Split after the block: the residual block's buffers stay on cpu:0, blocked.
    sy.build(mod, ["cpu:0", "cpu:1"], tmp_path / "two", place=["node:down/*=cpu:1", "node:small/*=cpu:1",
                                                                "node:computed/*=cpu:1"])
    assert algorithms(tmp_path / "two" / "manifest.json")["block/conv1"] == "convolution_winograd"
    actual = np.asarray(sy.runtime.load(tmp_path / "two").run(x=x, wx=wx))
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())


def test_a_convolution_whose_result_leaves_the_model_still_runs_winograd(tmp_path):
    """The model's result is dense row-major: a 3x3 convolution ending the
    model (here with its block's residual added) writes channels last for
    the Winograd kernel, and one conversion makes the dense result, instead
    of oneDNN's direct convolution writing it dense (some 2x slower)."""
    rng = np.random.default_rng(2)
    weights = [numpy_helper.from_array((rng.standard_normal((16, 16, 3, 3)) * 0.2).astype(np.float32), name)
               for name in ("w0", "w1")]
    weights += [numpy_helper.from_array(rng.standard_normal(16).astype(np.float32), name) for name in ("b0", "b1")]
    nodes = [conv("block/conv0", "x", "w0", "b0", "c0"),
             helper.make_node("Relu", ["c0"], ["r0"], name="block/relu0"),
             conv("block/conv1", "r0", "w1", "b1", "c1"),
             helper.make_node("Add", ["c1", "x"], ["s1"], name="block/add"),
             helper.make_node("Relu", ["s1"], ["y"], name="block/relu1")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 20, 20])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 20, 20])], weights)
    path = tmp_path / "ending.onnx"
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    mod = sy.frontend.from_onnx(path)
    x = rng.standard_normal((1, 16, 20, 20)).astype(np.float32)
    expected = np.asarray(sy.evaluate(mod, x=x))
    for name, devices, place in [("one", ["cpu:0"], []), ("split", ["cpu:0", "cpu:1"], ["node:block/conv1=cpu:1"])]:
        sy.build(mod, devices, tmp_path / name, place=place)
        manifest = json.loads((tmp_path / name / "manifest.json").read_text())
        assert algorithms(tmp_path / name / "manifest.json") == {"block/conv0": "convolution_winograd",
                                                                 "block/conv1": "convolution_winograd"}, name
        # The last kernel converts the result to the dense layout the model returns.
        last = manifest["primitives"][manifest["kernels"][-1]["primitive"]]
        assert last["kind"] == "reorder" and last["dst"].get("format", "") == "", (name, last)
        actual = np.asarray(sy.runtime.load(tmp_path / name).run(x=x))
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
