"""A QDQ (int8) model against ONNX Runtime and against its float original.

    /usr/bin/python3 bench/qdq_bench.py --build build [--model resnet18] [--inputs 4] [--rounds 3]
        [--runs 20] [--threads 1]

Makes MODEL_qdq.onnx from the suite's float model (tests/models/qdq_model.py;
the suite is exported by tests/models/export_models.py), then:

- agreement: on --inputs random inputs (another seed than calibration's),
  Switchyard's compiled QDQ model against ONNX Runtime's (npm's
  onnxruntime-node, installed into BUILD/peers as bench/peers/run_peers.py
  does): the largest output difference in units of the last quantized
  activation's scale (the quantum that feeds the final Gemm), the share of
  inputs with the same top-1 class, and that last quantized activation
  itself (the model cut there: its 8-bit values) compared element by
  element, in quantization steps.
- speed: in each round, one after another (so a disturbance of the shared
  machine hits all alike), Switchyard QDQ, Switchyard float, ORT QDQ and ORT
  float; the medians over rounds and the ratios.
"""
import argparse
import json
import os
import pathlib
import sys
import tempfile

import numpy as np
import onnx

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE / "peers"))
sys.path.insert(0, str(REPO / "tests" / "models"))
from measure import run_measured  # noqa: E402
import qdq_model  # noqa: E402
from run_peers import ensure_onnxruntime  # noqa: E402
from switchyard_peer import LATENCY_LINE, output_file  # noqa: E402

SUITE = pathlib.Path.home() / ".cache" / "switchyard" / "suite"


def compile_artifact(switchyard, model, artifact):
    m = run_measured([switchyard, "compile", model, "-o", artifact, "--devices", "cpu:0"])
    if not m.ok():
        sys.exit(f"compile {model}: {m.first_error_line()}")


def switchyard_run(switchyard, artifact, input_path, runs, threads, out):
    command = [switchyard, "run", artifact, "--output-dir", out, "--repeat", runs + 1, "--threads", threads,
               "--input", f"input={input_path}"]
    m = run_measured(command)
    if not m.ok():
        sys.exit(f"run {artifact}: {m.first_error_line()}")
    return float(LATENCY_LINE.findall(m.stdout)[-1][0]), np.load(pathlib.Path(out) / output_file(artifact))


def ort_run(node_modules, model, input_path, runs, threads, output_path, dtype=np.float32):
    env = dict(os.environ, NODE_PATH=str(node_modules))
    command = ["node", HERE / "peers" / "ort_bench.js", "--model", model, "--input", input_path, "--threads",
               threads, "--runs", runs, "--output", output_path]
    m = run_measured(command, env=env)
    if not m.ok():
        sys.exit(f"onnxruntime {model}: {m.first_error_line()}")
    return json.loads(m.stdout.strip().splitlines()[-1])["latency_ms"]["median"], np.fromfile(output_path, dtype)


def last_quantum(model):
    """The scale of the last DequantizeLinear of an activation (not of a constant)."""
    constants = {t.name: t for t in model.graph.initializer}
    for node in reversed(model.graph.node):
        if node.op_type == "DequantizeLinear" and node.input[0] not in constants:
            return float(onnx.numpy_helper.to_array(constants[node.input[1]]))
    raise ValueError("no DequantizeLinear of an activation")


def last_quantized_activation(model):
    """The model cut at the input of its last DequantizeLinear of an activation: that 8-bit tensor its output."""
    constants = {t.name for t in model.graph.initializer}
    for node in reversed(model.graph.node):
        if node.op_type == "DequantizeLinear" and node.input[0] not in constants:
            name = node.input[0]
            break
    cut = onnx.ModelProto()
    cut.CopyFrom(model)
    producer = next(n for n in cut.graph.node if name in n.output)
    zero_point = next(t for t in cut.graph.initializer if t.name == producer.input[2])
    del cut.graph.output[:]
    cut.graph.output.append(onnx.helper.make_tensor_value_info(name, zero_point.data_type, None))
    return cut, onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[zero_point.data_type]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--model", default="resnet18")
    parser.add_argument("--inputs", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    build = pathlib.Path(args.build).resolve()
    switchyard = str(build / "bin" / "switchyard")
    error = ensure_onnxruntime(build / "peers")
    if error:
        sys.exit(error)
    node_modules = build / "peers" / "node_modules"
    work = pathlib.Path(tempfile.mkdtemp(prefix="qdq-bench-"))
    float_model = SUITE / f"{args.model}.onnx"
    qdq_path = work / f"{args.model}_qdq.onnx"
    model = onnx.load(str(float_model))
    names = qdq_model.quantized_tensors(model.graph)
    ranges = qdq_model.activation_ranges(model, names, qdq_model.calibration_inputs(model, 4), build)
    qdq = qdq_model.make_qdq(model, ranges)
    onnx.save(qdq, str(qdq_path))
    for path, artifact in ((qdq_path, work / "qdq"), (float_model, work / "float")):
        compile_artifact(switchyard, path, artifact)

    cut, cut_dtype = last_quantized_activation(qdq)
    cut_path = work / f"{args.model}_qdq_cut.onnx"
    onnx.save(cut, str(cut_path))
    compile_artifact(switchyard, cut_path, work / "cut")

    quantum = last_quantum(qdq)
    differences, same_class, magnitude = [], 0, 0.0
    steps, steps_off, steps_count = 0, 0, 0
    for i, x in enumerate(qdq_model.calibration_inputs(model, args.inputs, seed=1)):
        input_path = work / f"input{i}.npy"
        np.save(input_path, x)
        _, ours = switchyard_run(switchyard, work / "qdq", input_path, 0, args.threads, work / f"out{i}")
        _, theirs = ort_run(node_modules, qdq_path, input_path, 1, args.threads, work / f"ort{i}.f32")
        differences.append(float(np.abs(ours.ravel() - theirs).max()))
        magnitude = max(magnitude, float(np.abs(theirs).max()))
        same_class += int(ours.ravel().argmax() == theirs.argmax())
        _, ours_cut = switchyard_run(switchyard, work / "cut", input_path, 0, args.threads, work / f"cut{i}")
        _, theirs_cut = ort_run(node_modules, cut_path, input_path, 1, args.threads, work / f"ortcut{i}.raw", cut_dtype)
        off = np.abs(ours_cut.ravel().astype(np.int64) - theirs_cut.astype(np.int64))
        steps, steps_off, steps_count = max(steps, int(off.max())), steps_off + int((off > 0).sum()), steps_count + off.size
    print(f"agreement with ONNX Runtime on {args.inputs} inputs: top-1 {same_class}/{args.inputs}, "
          f"largest output difference {max(differences):.4g} = {max(differences) / quantum:.2f} x the last "
          f"activation quantum {quantum:.4g} ({max(differences) / magnitude:.2%} of the largest output); "
          f"that activation's 8-bit values: at most {steps} step(s) apart, {steps_off / steps_count:.2%} of them "
          f"differ")

    times = {"switchyard_qdq": [], "switchyard_float": [], "ort_qdq": [], "ort_float": []}
    input_path = work / "input0.npy"
    for _ in range(args.rounds):
        times["switchyard_qdq"].append(switchyard_run(switchyard, work / "qdq", input_path, args.runs, args.threads,
                                                      work / "t")[0])
        times["switchyard_float"].append(switchyard_run(switchyard, work / "float", input_path, args.runs,
                                                        args.threads, work / "t")[0])
        times["ort_qdq"].append(ort_run(node_modules, qdq_path, input_path, args.runs, args.threads, work / "t.f32")[0])
        times["ort_float"].append(ort_run(node_modules, float_model, input_path, args.runs, args.threads,
                                          work / "t.f32")[0])
    median = {k: float(np.median(v)) for k, v in times.items()}
    for k, v in median.items():
        print(f"{k:18s} {v:8.2f} ms  (rounds: {', '.join(f'{t:.2f}' for t in times[k])})")
    print(f"Switchyard QDQ / ORT QDQ = {median['switchyard_qdq'] / median['ort_qdq']:.2f}; "
          f"Switchyard QDQ / Switchyard float = {median['switchyard_qdq'] / median['switchyard_float']:.2f}; "
          f"ORT QDQ / ORT float = {median['ort_qdq'] / median['ort_float']:.2f}  "
          f"(threads {args.threads}, load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
