"""A 1x1 expand that only its depthwise convolution reads, in a model with
constant weights: where the compiler fuses the two into one oneDNN
primitive, the depthwise weights stay plain in weights.bin and the kernel
names them (the runtime reorders them once, at load); an expand that
another operator also reads is never fused. Either way the artifact
computes what the interpreter does, on one device and split across two
(block b also adds a depthwise convolution's source to its result: the
primitive must not write over the residual it also reads as its source)."""
import json

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import switchyard as sy


def conv(name, x, w, b, out, kernel=1, strides=1, group=1):
    pad = kernel // 2
    return helper.make_node("Conv", [x, w, b], [out], name=name, kernel_shape=[kernel, kernel],
                            strides=[strides, strides], pads=[pad] * 4, group=group)


def clip(name, x, out):
    return helper.make_node("Clip", [x, "zero", "six"], [out], name=name)


def inverted_residuals(tmp_path):
    """x[1,8,112,112] -> a: expand 48, clip, depthwise stride 2, clip, project 16
    -> b: expand 32, clip, depthwise, clip, + the expand (a second reader), project 8 -> y."""
    rng = np.random.default_rng(0)
    initializers = [numpy_helper.from_array(np.float32(0), "zero"), numpy_helper.from_array(np.float32(6), "six")]
    for name, shape in [("a_w0", (48, 8, 1, 1)), ("a_w1", (48, 1, 3, 3)), ("a_w2", (16, 48, 1, 1)),
                        ("b_w0", (32, 16, 1, 1)), ("b_w1", (32, 1, 3, 3)), ("b_w2", (8, 32, 1, 1))]:
        initializers.append(numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name))
        bias = name.replace("_w", "_b")
        initializers.append(numpy_helper.from_array(rng.standard_normal(shape[0]).astype(np.float32), bias))
    nodes = [conv("a/expand", "x", "a_w0", "a_b0", "a0"), clip("a/clip0", "a0", "a1"),
             conv("a/depthwise", "a1", "a_w1", "a_b1", "a2", kernel=3, strides=2, group=48),
             clip("a/clip1", "a2", "a3"), conv("a/project", "a3", "a_w2", "a_b2", "a4"),
             conv("b/expand", "a4", "b_w0", "b_b0", "b0"), clip("b/clip0", "b0", "b1"),
             conv("b/depthwise", "b1", "b_w1", "b_b1", "b2", kernel=3, group=32),
             clip("b/clip1", "b2", "b3"), helper.make_node("Add", ["b3", "b1"], ["b4"], name="b/add"),
             conv("b/project", "b4", "b_w2", "b_b2", "y")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 112, 112])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 56, 56])], initializers)
    path = tmp_path / "blocks.onnx"
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    return path


def fused_kernels(manifest):
    """(kernel, its depthwise post-op) for each kernel whose primitive fuses a depthwise convolution."""
    found = []
    for kernel in manifest["kernels"]:
        if "primitive" in kernel:
            for post in manifest["primitives"][kernel["primitive"]]["post_ops"]:
                if post["kind"] == "depthwise":
                    found.append((kernel, post))
    return found


def test_depthwise_fusion_keeps_the_answer_and_its_weights_plain(tmp_path):
    mod = sy.frontend.from_onnx(inverted_residuals(tmp_path))
    x = np.random.default_rng(1).standard_normal((1, 8, 112, 112)).astype(np.float32)
    expected = np.asarray(sy.evaluate(mod, x=x))
    for devices, place in [(["cpu:0"], []), (["cpu:0", "cpu:1"], ["node:b/*=cpu:1"])]:
        out = tmp_path / str(len(devices))
        sy.build(mod, devices, out, place=place)
        actual = np.asarray(sy.runtime.load(out).run(x=x))
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
        manifest = json.loads((out / "manifest.json").read_text())
        fused = fused_kernels(manifest)
        print(f"{len(devices)} device(s): fused {[kernel['name'] for kernel, _ in fused]}")
        # Block b's expand has a second reader; only block a may fuse (oneDNN 2.6 does on AVX-512).
        assert len(fused) <= 1
        for kernel, post in fused:
            assert kernel["span"].startswith("fused(a/expand"), kernel["span"]
            assert "a/depthwise" in kernel["span"], kernel["span"]
            assert post["stride"] == 2 and post["padding"] == 1 and post["operand"]["dims"] == [48, 1, 1, 3, 3]
            weight = manifest["weights"][kernel["depthwise_weights"]]
            assert weight["shape"] == [48, 1, 3, 3] and "prepared" not in weight, weight
