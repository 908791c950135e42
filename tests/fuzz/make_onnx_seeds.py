"""Writes the ONNX importer's seed corpus (tests/fuzz/corpus/onnx_import/):
small models with the structure of the suite models (convolution, batch
normalisation, pooling, Gemm, attention-like MatMul/Softmax, shape
arithmetic) and weights shrunk to a few elements, so a fuzzer spends its
time on structure, not on bytes of weights.

    /usr/bin/python3 tests/fuzz/make_onnx_seeds.py
"""
import pathlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = pathlib.Path(__file__).resolve().parent / "corpus" / "onnx_import"


def weight(name, *shape):
    rng = np.random.default_rng(len(name))
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)


def model(name, nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="switchyard-fuzz-seed")
    onnx.checker.check_model(m)
    (OUT / f"{name}.onnx").write_bytes(m.SerializeToString())


def value(name, *shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, list(shape))


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    model("conv_block", [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "s", "o", "m", "v"], ["n"], name="bn"),
        helper.make_node("Relu", ["n"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p"], ["y"], name="gap"),
    ], [value("x", 1, 2, 4, 4)], [value("y", 1, 2, 1, 1)],
        [weight("w", 2, 2, 3, 3), weight("b", 2), weight("s", 2), weight("o", 2), weight("m", 2),
         numpy_helper.from_array(np.ones(2, np.float32), "v")])
    model("gemm_softmax", [
        helper.make_node("Flatten", ["x"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "w", "b"], ["g"], name="fc", transB=1),
        helper.make_node("Softmax", ["g"], ["y"], name="softmax", axis=1),
    ], [value("x", 1, 2, 2)], [value("y", 1, 3)], [weight("w", 3, 4), weight("b", 3)])
    model("attention", [
        helper.make_node("MatMul", ["q", "k"], ["s"], name="scores"),
        helper.make_node("Div", ["s", "scale"], ["d"], name="scale"),
        helper.make_node("Softmax", ["d"], ["p"], name="softmax", axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["y"], name="context"),
    ], [value("q", 2, 3, 4), value("k", 2, 4, 3), value("v", 2, 3, 4)], [value("y", 2, 3, 4)],
        [numpy_helper.from_array(np.array(2.0, np.float32), "scale")])
    model("shape_math", [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "zero"], ["n"], name="batch", axis=0),
        helper.make_node("Unsqueeze", ["n", "axes"], ["n1"], name="unsqueeze"),
        helper.make_node("Concat", ["n1", "minus_one"], ["target"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"], name="reshape"),
    ], [value("x", 2, 3, 4)], [value("y", 2, 12)],
        [numpy_helper.from_array(np.array(0, np.int64), "zero"),
         numpy_helper.from_array(np.array([0], np.int64), "axes"),
         numpy_helper.from_array(np.array([-1], np.int64), "minus_one")])
    model("layer_norm_gelu", [
        helper.make_node("ReduceMean", ["x"], ["mu"], name="mean", axes=[-1]),
        helper.make_node("Sub", ["x", "mu"], ["c"], name="center"),
        helper.make_node("Mul", ["c", "c"], ["sq"], name="square"),
        helper.make_node("ReduceMean", ["sq"], ["var"], name="variance", axes=[-1]),
        helper.make_node("Add", ["var", "eps"], ["ve"], name="add_eps"),
        helper.make_node("Sqrt", ["ve"], ["sd"], name="sqrt"),
        helper.make_node("Div", ["c", "sd"], ["n"], name="normalise"),
        helper.make_node("Erf", ["n"], ["e"], name="erf"),
        helper.make_node("Add", ["e", "one"], ["e1"], name="plus_one"),
        helper.make_node("Mul", ["n", "e1"], ["y"], name="gelu"),
    ], [value("x", 2, 4)], [value("y", 2, 4)],
        [numpy_helper.from_array(np.array(1e-5, np.float32), "eps"),
         numpy_helper.from_array(np.array(1.0, np.float32), "one")])


if __name__ == "__main__":
    main()
