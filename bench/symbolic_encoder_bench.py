"""A BERT-base-sized encoder with a symbolic batch and sequence length, one
artifact (`switchyard compile --specialize`) against a static build per
shape and against ONNX Runtime running the symbolic model, in one run.

    /usr/bin/python3 bench/symbolic_encoder_bench.py --build build [--threads 1,2] [--rounds 3] [--runs 10]

The model is the zoo's `bert_base` (tests/models/zoo_models.py: 12 post-norm
Transformer layers of width 768, 12 heads; seeded random weights) exported
with `dynamic_axes` on batch and sequence. Its attention reshapes
(batch*seq, 768) to (seq, batch, 768), which only a reshape naming its
symbolic target can say. Each shape's outputs are checked against
PyTorch's. Rounds alternate the peers' order; each figure is the median
over rounds of each peer's median latency. Compile times are cold (an
empty kernel cache each).
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "models"))
sys.path.insert(0, str(REPO / "bench" / "peers"))

from run_peers import ensure_onnxruntime  # noqa: E402

SHAPES = [(1, 16), (1, 128), (4, 384)]  # (batch, sequence): the three
LATENCY_LINE = re.compile(r"^latency_ms median=([\d.]+) ", re.M)
TOLERANCE = 1e-4  # max |actual - expected| over max |expected|, as run_peers


def export(work):
    """The symbolic and static ONNX files, each shape's input and PyTorch's output."""
    import torch

    from zoo_models import MODELS

    symbolic = work / "encoder_symbolic.onnx"
    if symbolic.exists() and all((work / f"input_{b}x{s}.npy").exists() for b, s in SHAPES):
        return symbolic
    torch.manual_seed(0)
    model = MODELS["bert_base"][0]().eval()
    example = torch.randn(1, 128, 768)
    torch.onnx.export(model, example, str(symbolic), input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch", 1: "seq"}, "output": {0: "batch", 1: "seq"}},
                      opset_version=13)
    for batch, seq in SHAPES:
        x = torch.randn(batch, seq, 768)
        np.save(work / f"input_{batch}x{seq}.npy", x.numpy())
        with torch.no_grad():
            np.save(work / f"expected_{batch}x{seq}.npy", model(x).numpy())
    return symbolic


def compile_cold(switchyard, args, work, name):
    """Compiles with an empty kernel cache; returns (artifact, seconds)."""
    cache = work / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    artifact = work / name
    start = time.perf_counter()
    done = subprocess.run([str(switchyard), "compile", *map(str, args), "-o", str(artifact), "--devices", "cpu:0",
                           "--rebuild"], capture_output=True, text=True, env=dict(os.environ, XDG_CACHE_HOME=str(cache)))
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"compile {name} failed: {done.stderr.strip()}")
    return artifact, seconds


def relative_error(actual, expected):
    return float(np.abs(actual - expected).max() / max(np.abs(expected).max(), 1e-30))


def run_switchyard(switchyard, artifact, shape, threads, runs, work):
    batch, seq = shape
    out = work / "out"
    done = subprocess.run([str(switchyard), "run", str(artifact), "--input", f"input={work / f'input_{batch}x{seq}.npy'}",
                           "--output-dir", str(out), "--repeat", str(runs + 1), "--threads", str(threads)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"run {artifact.name} at {shape} failed: {done.stderr.strip()}")
    error = relative_error(np.load(next(out.glob("*.npy"))), np.load(work / f"expected_{batch}x{seq}.npy"))
    if error > TOLERANCE:
        sys.exit(f"{artifact.name} at {shape}: relative error {error:.2e} against PyTorch")
    return float(LATENCY_LINE.search(done.stdout).group(1)), error


def run_ort(node_modules, model, shape, threads, runs, work):
    batch, seq = shape
    done = subprocess.run(["node", str(REPO / "bench/peers/ort_bench.js"), "--model", str(model), "--input",
                           str(work / f"input_{batch}x{seq}.npy"), "--expected", str(work / f"expected_{batch}x{seq}.npy"),
                           "--threads", str(threads), "--warmup", "2", "--runs", str(runs)],
                          capture_output=True, text=True, env=dict(os.environ, NODE_PATH=str(node_modules)))
    if done.returncode != 0:
        sys.exit(f"ONNX Runtime at {shape} failed: {done.stderr.strip()[-2000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return figures["latency_ms"]["median"], figures["relative_error"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=pathlib.Path, default=REPO / "build")
    parser.add_argument("--work", type=pathlib.Path, default=pathlib.Path("/tmp/sy-symbolic-encoder"))
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", type=pathlib.Path, help="also write the figures here")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    switchyard = args.build / "bin" / "switchyard"
    node_modules = ensure_onnxruntime(args.build / "peers")
    if isinstance(node_modules, str):
        sys.exit(node_modules)
    node_modules = args.build / "peers" / "node_modules"
    model = export(args.work)

    result = {"load_before": os.getloadavg(), "shapes": {}}
    batches = sorted({b for b, _ in SHAPES})
    seqs = sorted({s for _, s in SHAPES})
    specialised, result["compile_s_specialised"] = compile_cold(
        switchyard, [model, "--specialize", "batch=" + ",".join(map(str, batches)), "--specialize",
                     "seq=" + ",".join(map(str, seqs))], args.work, "specialised")
    result["programs"] = len(batches) * len(seqs)
    static = {}
    for batch, seq in SHAPES:
        static[(batch, seq)], result[f"compile_s_static_{batch}x{seq}"] = compile_cold(
            switchyard, [model, "--input-shape", f"input={batch}x{seq}x768"], args.work, f"static_{batch}x{seq}")

    for threads in map(int, args.threads.split(",")):
        for shape in SHAPES:
            peers = {
                "specialised": lambda s=shape: run_switchyard(switchyard, specialised, s, threads, args.runs, args.work),
                "static": lambda s=shape: run_switchyard(switchyard, static[s], s, threads, args.runs, args.work),
                "onnxruntime": lambda s=shape: run_ort(node_modules, model, s, threads, args.runs, args.work),
            }
            times = {name: [] for name in peers}
            errors = {}
            order = list(peers)
            for r in range(args.rounds):
                for name in order[r % len(order):] + order[:r % len(order)]:
                    ms, errors[name] = peers[name]()
                    times[name].append(ms)
            med = {name: statistics.median(t) for name, t in times.items()}
            row = {"threads": threads, "ms": med, "relative_error": errors,
                   "specialised_over_static": med["specialised"] / med["static"],
                   "specialised_over_onnxruntime": med["specialised"] / med["onnxruntime"]}
            result["shapes"][f"{shape[0]}x{shape[1]} t{threads}"] = row
            print(f"batch {shape[0]} seq {shape[1]:>3} threads {threads}: specialised {med['specialised']:8.2f} ms, "
                  f"static {med['static']:8.2f}, ONNX Runtime {med['onnxruntime']:8.2f}; specialised/static "
                  f"{row['specialised_over_static']:.2f}x, /ORT {row['specialised_over_onnxruntime']:.2f}x", flush=True)
    result["load_after"] = os.getloadavg()
    print(f"cold compile: {result['programs']} specialisations {result['compile_s_specialised']:.2f} s; static "
          + ", ".join(f"{b}x{s} {result[f'compile_s_static_{b}x{s}']:.2f} s" for b, s in SHAPES))
    print("load:", result["load_before"], "->", result["load_after"])
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
