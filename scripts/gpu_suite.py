"""The model suite on a GPU and split between it and its host, against PyTorch eager.

For each suite model (tests/models/model_zoo.py) and batch size it exports
the ONNX file with the machine's own PyTorch, compiles it with Switchyard
twice (all on the GPU; split, the final products on the host) and runs each,
checking the output against PyTorch's and timing both on the same device.
Writes a Markdown table and prints it; exits 1 when an output is wrong or a
step fails. Outputs are checked against PyTorch's on the CPU in float32.

    python3 scripts/gpu_suite.py --switchyard PATH --out FILE [--gpu cuda:0] [--host cpu:0]
                                 [--models mlp,resnet18] [--batches 1,32] [--runs 20]

scripts/gpu-check.sh runs it on the GPU machine. Here, `--gpu cpu:1` runs
the same steps on two CPU devices with PyTorch on the CPU (its dry run).
"""
import argparse
import inspect
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "models"))
import model_zoo  # noqa: E402

LATENCY_LINE = re.compile(r"^latency_ms median=([\d.]+) min=([\d.]+) p90=([\d.]+) runs=(\d+)$", re.M)
TOLERANCE = 1e-3  # max |actual - expected| over max |expected|: cuDNN and PyTorch pick different algorithms
STEP_TIMEOUT_S = 240


def export(model, x, path):
    """The legacy (TorchScript) exporter at the suite's opset: newer PyTorch
    defaults to the dynamo exporter, whose graphs differ from the suite's."""
    kwargs = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    torch.onnx.export(model, (torch.from_numpy(x),), str(path), opset_version=13, do_constant_folding=True,
                      input_names=["input"], output_names=["output"], **kwargs)


def torch_latency_ms(model, x, device, runs):
    """Median of `runs` timed calls after three warm-ups, synchronised on a GPU."""
    model = model.to(device)
    tensor = torch.from_numpy(x).to(device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    times = []
    with torch.no_grad():
        for i in range(runs + 3):
            sync()
            start = time.perf_counter()
            model(tensor)
            sync()
            if i >= 3:
                times.append((time.perf_counter() - start) * 1e3)
    return float(np.median(times))


def reference_output(model, x):
    """PyTorch's output on the CPU in float32: on a GPU it would convolve in TF32 (cuDNN's default there)."""
    with torch.no_grad():
        return model(torch.from_numpy(x)).numpy().astype(np.float64)


def run_switchyard(switchyard, model_path, x_path, expected, devices, host, rules, work, runs):
    artifact = work / "artifact"
    command = [switchyard, "compile", str(model_path), "-o", str(artifact), "--devices", devices, "--host", host]
    for rule in rules:
        command += ["--place", rule]
    start = time.perf_counter()
    compiled = subprocess.run(command, capture_output=True, text=True, timeout=STEP_TIMEOUT_S)
    compile_s = time.perf_counter() - start
    if compiled.returncode != 0:
        return {"error": "compile: " + (compiled.stderr.strip().splitlines() or ["?"])[0]}
    out = work / "out"
    ran = subprocess.run([switchyard, "run", str(artifact), "--input", f"input={x_path}", "--output-dir", str(out),
                          "--repeat", str(runs + 1)], capture_output=True, text=True, timeout=STEP_TIMEOUT_S)
    found = LATENCY_LINE.findall(ran.stdout)
    if ran.returncode != 0 or not found:
        return {"error": "run: " + (ran.stderr.strip().splitlines() or ["no latency line"])[0]}
    actual = np.load(out / "output.npy")  # the exported graph's output name
    if actual.shape != expected.shape:
        return {"error": f"output shape {actual.shape}, expected {expected.shape}"}
    scale = float(np.abs(expected).max()) or 1.0
    error = float(np.abs(actual.astype(np.float64) - expected).max()) / scale
    # The runtime fails a run whose copy moves other bytes than the manifest's: these are the bytes moved.
    copies = json.loads((artifact / "manifest.json").read_text()).get("copies", [])
    return {"compile_s": compile_s, "latency_ms": float(found[-1][0]), "error": None if error <= TOLERANCE else
            f"relative error {error:.3g} > {TOLERANCE:g}", "relative_error": error,
            "copied": f"{len(copies)} copies, {sum(c['bytes'] for c in copies)} bytes"}


def cell(result):
    if result.get("error") and "latency_ms" not in result:
        return result["error"].replace("|", "/")[:240]
    text = (f"{result['latency_ms']:.3f} ms (compile {result['compile_s']:.2f} s, error {result['relative_error']:.1e}, "
            f"{result['copied']})")
    return text + (f" WRONG: {result['error']}" if result.get("error") else "")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--switchyard", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--gpu", default="cuda:0")
    parser.add_argument("--host", default="cpu:0")
    parser.add_argument("--models", default=",".join(model_zoo.MODELS))
    parser.add_argument("--batches", default="1,32")
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    device = torch.device(args.gpu if args.gpu.startswith("cuda") else "cpu")
    devices = f"{args.gpu},{args.host}"
    # Split: the matrix products (the classifiers, the encoder's projections) on the host.
    split_rules = [f"op:nn.dense={args.host}", f"op:matmul={args.host}"]
    lines = [f"| model | batch | PyTorch eager on {args.gpu} | Switchyard on {args.gpu} | ratio | "
             f"Switchyard split {args.gpu} + {args.host} |", "| --- | --- | --- | --- | --- | --- |"]
    failed = False
    work_root = Path(tempfile.mkdtemp(prefix="sy-gpu-suite-"))
    for name in args.models.split(","):
        for batch in [int(b) for b in args.batches.split(",")]:
            work = work_root / f"{name}-{batch}"
            work.mkdir(parents=True)
            model = model_zoo.build_model(name)
            shape = (batch,) + tuple(model_zoo.MODELS[name][1][1:])
            x = np.random.default_rng(batch).standard_normal(shape).astype(np.float32)
            try:
                export(model, x, work / "model.onnx")
            except Exception as e:  # an exporter failure is this row's cell, not the end of the check
                lines.append(f"| {name} | {batch} | export failed: {str(e).splitlines()[0][:80]} | | | |")
                Path(args.out).write_text("\n".join(lines) + "\n")
                failed = True
                continue
            np.save(work / "input.npy", x)
            expected = reference_output(model, x)
            try:
                torch_ms = torch_latency_ms(model, x, device, args.runs)
            except Exception as e:  # no CUDA in this PyTorch: Switchyard's cells are still worth having
                torch_ms = None
                failed = True
                print(f"{name} batch {batch}: PyTorch on {device}: {str(e).splitlines()[0]}", flush=True)
            results = []
            for label, rules in (("gpu", []), ("split", split_rules)):
                (work / label).mkdir()
                result = run_switchyard(args.switchyard, work / "model.onnx", work / "input.npy", expected, devices,
                                        args.host, rules, work / label, args.runs)
                failed |= bool(result.get("error"))
                results.append(result)
            ratio = f"{results[0]['latency_ms'] / torch_ms:.2f}x" if torch_ms and "latency_ms" in results[0] else ""
            torch_cell = f"{torch_ms:.3f} ms" if torch_ms else "failed"
            lines.append(f"| {name} | {batch} | {torch_cell} | {cell(results[0])} | {ratio} | {cell(results[1])} |")
            print(lines[-1], flush=True)
            # After every row: a check cut short by its time limit keeps what it measured.
            Path(args.out).write_text("\n".join(lines) + "\n")
    Path(args.out).write_text("\n".join(lines) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
