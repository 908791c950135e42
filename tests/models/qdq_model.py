# Makes a QDQ model (ONNX Runtime's default static quantization format) from
# a float ONNX model, with onnx.helper only (Debian has no ONNX Runtime
# quantization tool):
#
#   /usr/bin/python3 tests/models/qdq_model.py FLOAT.onnx QDQ.onnx [--samples 4] [--build build]
#
# - Activations: uint8, one scale and zero point per tensor, from the range
#   [min(x, 0), max(x, 0)] seen on a few calibration inputs (random, shaped
#   like ImageNet images after normalisation), which Switchyard computes.
#   Every float tensor a node produces (and the graph input) gets a
#   QuantizeLinear -> DequantizeLinear pair, except a Conv's output read only
#   by a Relu (the pair goes after the Relu, as ORT folds Conv + Relu) and
#   the graph's outputs.
# - Conv and Gemm weights: int8, symmetric (zero point 0, range [-127, 127]),
#   one scale per output channel, through DequantizeLinear (axis 0).
# - Biases: int32 with scale x_scale * w_scale per channel and zero point 0.
import argparse
import pathlib
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def activation_ranges(model, names, inputs, build):
    """name -> (low, high) over `inputs`, from a Switchyard build of `model`
    whose outputs are the tensors `names`."""
    sys.path.insert(0, str(pathlib.Path(build) / "python"))
    import switchyard as sy

    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    del probe.graph.output[:]
    probe.graph.output.extend(helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in names)
    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder) / "probe.onnx"
        onnx.save(probe, str(path))
        sy.build(sy.frontend.from_onnx(path), ["cpu:0"], pathlib.Path(folder) / "artifact")
        loaded = sy.runtime.load(pathlib.Path(folder) / "artifact")
        ranges = {}
        for x in inputs:
            outputs = loaded.run(**{model.graph.input[0].name: x})
            for name, value in zip(names, outputs, strict=True):
                low, high = ranges.get(name, (0.0, 0.0))
                ranges[name] = (min(low, float(value.min())), max(high, float(value.max())))
    return ranges


def activation_parameters(low, high):
    """uint8 scale and zero point mapping [low, high] (low <= 0 <= high) onto [0, 255]."""
    scale = np.float32((high - low) / 255 if high > low else 1.0)
    zero_point = np.uint8(np.clip(np.rint(-low / scale), 0, 255))
    return scale, zero_point


def per_channel_weights(w):
    """int8 weights symmetric per output channel (axis 0), and their scales."""
    flat = np.abs(w.reshape(w.shape[0], -1)).max(axis=1)
    scale = np.where(flat > 0, flat / 127, 1).astype(np.float32)
    q = np.clip(np.rint(w / scale.reshape((-1,) + (1,) * (w.ndim - 1))), -127, 127).astype(np.int8)
    return q, scale


class QdqWriter:
    def __init__(self, model):
        self.model = model
        self.initializers = {t.name: t for t in model.graph.initializer}
        self.new_initializers, self.nodes = [], []

    def constant(self, name, value):
        self.new_initializers.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def dequantize(self, q_name, scale, zero_point, output, axis=None):
        inputs = [q_name, self.constant(output + "_scale", scale), self.constant(output + "_zero_point", zero_point)]
        attrs = {} if axis is None else {"axis": axis}
        self.nodes.append(helper.make_node("DequantizeLinear", inputs, [output], name=output + "_dq", **attrs))

    def quantize_pair(self, tensor, scale, zero_point):
        """x -> QuantizeLinear -> DequantizeLinear; returns the dequantized name."""
        q = tensor + "_quantized"
        inputs = [tensor, self.constant(q + "_scale", scale), self.constant(q + "_zero_point", zero_point)]
        self.nodes.append(helper.make_node("QuantizeLinear", inputs, [q], name=q + "_q"))
        self.dequantize(q, scale, zero_point, tensor + "_dequantized")
        return tensor + "_dequantized"

    def weights(self, node, x_scale):
        """The node's weight (and bias) inputs replaced by dequantized int8 (int32) constants."""
        w = numpy_helper.to_array(self.initializers[node.input[1]])
        transposed = node.op_type == "Gemm" and not any(a.name == "transB" and a.i for a in node.attribute)
        q, scale = per_channel_weights(w.T if transposed else w)
        if transposed:
            q = np.ascontiguousarray(q.T)
        axis = 1 if transposed else 0
        name = node.input[1] + "_dequantized"
        self.dequantize(self.constant(node.input[1] + "_quantized", q), scale, np.zeros_like(scale, np.int8), name,
                        axis)
        inputs = [node.input[0], name]
        if len(node.input) > 2 and node.input[2]:
            b = numpy_helper.to_array(self.initializers[node.input[2]])
            b_scale = (x_scale * scale).astype(np.float32)
            b_q = np.rint(b / b_scale).astype(np.int32)
            b_name = node.input[2] + "_dequantized"
            self.dequantize(self.constant(node.input[2] + "_quantized", b_q), b_scale, np.zeros_like(b_q), b_name, 0)
            inputs.append(b_name)
        return inputs


def quantized_tensors(graph):
    """The float tensors that get a QuantizeLinear -> DequantizeLinear pair."""
    consumers = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    outputs = {o.name for o in graph.output}
    chosen = [graph.input[0].name]
    for node in graph.node:
        for name in node.output:
            readers = consumers.get(name, [])
            if name in outputs or not readers:
                continue
            if node.op_type == "Conv" and len(readers) == 1 and readers[0].op_type == "Relu":
                continue
            chosen.append(name)
    return chosen


def make_qdq(model, ranges):
    graph = model.graph
    writer = QdqWriter(model)
    parameters = {name: activation_parameters(*r) for name, r in ranges.items()}
    renamed = {}
    for name in [graph.input[0].name]:
        renamed[name] = writer.quantize_pair(name, *parameters[name])
    for node in graph.node:
        node_inputs = [renamed.get(n, n) for n in node.input]
        if node.op_type in ("Conv", "Gemm") and node.input[1] in writer.initializers:
            x_scale = parameters[node.input[0]][0]
            node_inputs = [node_inputs[0]] + writer.weights(node, x_scale)[1:]
        new = helper.make_node(node.op_type, node_inputs, list(node.output), name=node.name)
        new.attribute.extend(node.attribute)
        writer.nodes.append(new)
        for name in node.output:
            if name in parameters and name != graph.input[0].name:
                renamed[name] = writer.quantize_pair(name, *parameters[name])
    used = {n for node in writer.nodes for n in node.input}
    kept = [t for t in graph.initializer if t.name in used]
    new_graph = helper.make_graph(writer.nodes, graph.name + "_qdq", list(graph.input), list(graph.output),
                                  kept + writer.new_initializers)
    qdq = helper.make_model(new_graph, opset_imports=[helper.make_opsetid("", 13)])
    qdq.ir_version = model.ir_version
    onnx.checker.check_model(qdq)
    return qdq


def calibration_inputs(model, samples, seed=0):
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(samples)]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("float_model")
    parser.add_argument("qdq_model")
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--build", default="build")
    args = parser.parse_args()
    model = onnx.load(args.float_model)
    names = quantized_tensors(model.graph)
    ranges = activation_ranges(model, names, calibration_inputs(model, args.samples), args.build)
    onnx.save(make_qdq(model, ranges), args.qdq_model)
    print(f"{args.qdq_model}: {len(names)} activations quantized")


if __name__ == "__main__":
    main()
