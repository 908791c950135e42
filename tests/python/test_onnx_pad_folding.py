# A constant-zero Pad that only a Conv or an AveragePool reads is folded into
# that window's padding (src/frontend/onnx/pad_folding.h): PyTorch exports
# avg_pool2d(padding=1) with count_include_pad=True as Pad + AveragePool
# (Inception-v3's pool branches), and a converted Pad is concatenations that
# keep the activations around them out of oneDNN's layouts. Each case checks
# the imported IR (folded or not) and the interpreter and the compiled
# artifact against PyTorch on the same input.
import numpy as np
import onnx
import pytest
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

import switchyard as sy

RNG = np.random.default_rng(7)
X = RNG.standard_normal((1, 5, 9, 8)).astype(np.float32)
W = RNG.standard_normal((4, 5, 3, 3)).astype(np.float32)


def model(nodes, output_shape, opset=13, initializers=(), extra_outputs=()):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(X.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, output_shape),
                               *[helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in extra_outputs]],
                              initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    if output_shape is not None and not extra_outputs:  # the checker wants every output's shape
        onnx.checker.check_model(m)
    return m


def pads_constant(name, pads):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(pads, np.int64), name))


def run_both(tmp_path, m):
    """The imported module's text, and its output from the interpreter and from a compiled artifact."""
    path = tmp_path / "m.onnx"
    onnx.save(m, str(path))
    mod = sy.frontend.from_onnx(path)
    interpreted = sy.evaluate(mod, x=X)
    sy.build(mod, ["cpu:0"], tmp_path / "art")
    compiled = sy.runtime.load(tmp_path / "art").run(x=X)
    first = lambda out: out[0] if isinstance(out, (list, tuple)) else out  # noqa: E731  (y, of several outputs)
    return str(mod), np.asarray(first(interpreted)), np.asarray(first(compiled))


def expect(actual, reference):
    np.testing.assert_allclose(actual, reference.numpy(), rtol=1e-5, atol=1e-5)


def test_a_zero_pad_before_an_average_pool_becomes_its_counted_padding(tmp_path):
    m = model([pads_constant("pads", [0, 0, 1, 1, 0, 0, 1, 1]),
               helper.make_node("Pad", ["x", "pads"], ["padded"], mode="constant"),
               helper.make_node("AveragePool", ["padded"], ["y"], kernel_shape=[3, 3], strides=[1, 1],
                                pads=[0, 0, 0, 0], ceil_mode=0)], [1, 5, 9, 8])
    text, interpreted, compiled = run_both(tmp_path, m)
    assert "concatenate" not in text, text
    assert "count_include_pad=True" in text and "padding=[1, 1, 1, 1]" in text, text
    reference = F.avg_pool2d(torch.from_numpy(X), 3, 1, padding=1, count_include_pad=True)
    expect(interpreted, reference)
    expect(compiled, reference)


def test_an_uneven_zero_pad_before_a_convolution_adds_to_its_own_padding(tmp_path):
    pads = numpy_helper.from_array(np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64), "pads")
    w = numpy_helper.from_array(W, "w")
    m = model([helper.make_node("Pad", ["x", "pads"], ["padded"]),
               helper.make_node("Conv", ["padded", "w"], ["y"], pads=[1, 0, 0, 1])], [1, 4, 11, 10],
              initializers=[pads, w])
    text, interpreted, compiled = run_both(tmp_path, m)
    assert "concatenate" not in text, text
    # Total padding: top 1+1, left 2+0, bottom 2+0, right 1+1.
    reference = F.conv2d(F.pad(torch.from_numpy(X), (2, 2, 2, 2)), torch.from_numpy(W))
    expect(interpreted, reference)
    expect(compiled, reference)


def test_an_opset_9_pad_with_attributes_folds_too(tmp_path):
    m = model([helper.make_node("Pad", ["x"], ["padded"], mode="constant", pads=[0, 0, 2, 1, 0, 0, 0, 1], value=0.0),
               helper.make_node("AveragePool", ["padded"], ["y"], kernel_shape=[3, 3], strides=[2, 2])],
              [1, 5, 5, 4], opset=9)
    text, interpreted, compiled = run_both(tmp_path, m)
    assert "concatenate" not in text, text
    reference = F.avg_pool2d(F.pad(torch.from_numpy(X), (1, 1, 2, 0)), 3, 2)
    expect(interpreted, reference)
    expect(compiled, reference)


# Pads that must stay Pads: a fill that is not zero, a second reader, a
# ceil-mode pool (its extra window would count the Pad's zeros but not its
# own), a pool whose own padding is not counted.
NOT_FOLDED = {
    "fill one": ([helper.make_node("Pad", ["x", "pads", "one"], ["padded"]),
                  helper.make_node("AveragePool", ["padded"], ["y"], kernel_shape=[3, 3])], ()),
    "two readers": ([helper.make_node("Pad", ["x", "pads"], ["padded"]),
                     helper.make_node("AveragePool", ["padded"], ["y"], kernel_shape=[3, 3])], ("padded",)),
    "ceil mode": ([helper.make_node("Pad", ["x", "pads"], ["padded"]),
                   helper.make_node("AveragePool", ["padded"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                                    ceil_mode=1)], ()),
    "own padding uncounted": ([helper.make_node("Pad", ["x", "pads"], ["padded"]),
                               helper.make_node("AveragePool", ["padded"], ["y"], kernel_shape=[3, 3],
                                                pads=[1, 1, 1, 1], count_include_pad=0)], ()),
}


@pytest.mark.parametrize("case", list(NOT_FOLDED))
def test_other_pads_stay_pads_and_compute_the_same(tmp_path, case):
    nodes, extra = NOT_FOLDED[case]
    initializers = [numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "pads"),
                    numpy_helper.from_array(np.array(1.0, np.float32), "one")]
    m = model(nodes, None, initializers=initializers, extra_outputs=extra)
    text, interpreted, compiled = run_both(tmp_path, m)
    assert "concatenate" in text, text
    x = torch.from_numpy(X)
    padded = F.pad(x, (1, 1, 1, 1), value=1.0 if case == "fill one" else 0.0)
    if case == "ceil mode":
        reference = F.avg_pool2d(padded, 3, 2, ceil_mode=True)
    elif case == "own padding uncounted":
        reference = F.avg_pool2d(padded, 3, 1, padding=1, count_include_pad=False)
    else:
        reference = F.avg_pool2d(padded, 3, 1)
    expect(interpreted, reference)
    expect(compiled, reference)
