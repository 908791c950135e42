"""Requests per second of a model split in two stages over two one-core
devices, pipelined with run_async (issue 38, "Streams of requests";
docs/design.md, "Requests in flight").

The model: a chain of ResNet basic blocks (two 3x3 convolutions, batch
norm folded, ReLU, a residual add), `--blocks` in `stage1` and as many in
`stage2`. It is compiled

  (a) split: stage1 on cpu:0, stage2 on cpu:1 (`--place node:/stage1/*=cpu:0
      --place node:/stage2/*=cpu:1`), one core each (`--cores cpu:0=0
      --cores cpu:1=1`);
  (b) on one device with one core (`--cores cpu:0=0`);
  (c) on one device with two threads (`--cores cpu:0=0-1`);

and each serves `--requests` requests with distinct inputs (after one
untimed pass over them, twice, timed):

  pipelined        (a), Module.run_async, up to --in-flight requests in flight:
                   cpu:0 runs stage1 of request k+1 while cpu:1 runs stage2 of k
  split, in turn   (a), run() one request after another (its queues at once,
                   but stage2 of k and stage1 of k+1 never overlap)
  one core         (b), run() one after another
  two threads      (c), run() one after another
  two at once      (b) and the same build on core 1, two processes at once,
                   their rates summed: what two one-core devices can serve
                   on this machine at this moment (the pipeline's ceiling)

Each cell runs in a process of its own (no other cell's threads spin beside
it), `--rounds` times, the cells interleaved in each round so the shared
machine's background load touches all alike; the median of the rounds is
printed, with the ratios. The pipelined and the in-turn runs of (a) must
give the same outputs bit for bit (their checksums are compared). Before
the rounds and after them it prints how much of a core each of two cores
keeps while both compute (bench/peers/core_share.py): a virtual machine's
two vCPUs are at times one physical core, and then no two-core figure here
can exceed one core's.

    /usr/bin/python3 bench/pipeline_throughput_bench.py --build build [--rounds 5] [--requests 200]
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent / "peers"))
import core_share  # noqa: E402


# Timed passes over the inputs, after the warm-up pass.
PASSES = 2


def export(folder, channels, side, blocks, requests):
    import torch

    class BasicBlock(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False)
            self.bn1 = torch.nn.BatchNorm2d(channels)
            self.conv2 = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False)
            self.bn2 = torch.nn.BatchNorm2d(channels)

        def forward(self, x):
            y = torch.relu(self.bn1(self.conv1(x)))
            return torch.relu(x + self.bn2(self.conv2(y)))

    class TwoStages(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.stage1 = torch.nn.Sequential(*[BasicBlock() for _ in range(blocks)])
            self.stage2 = torch.nn.Sequential(*[BasicBlock() for _ in range(blocks)])

        def forward(self, x):
            return self.stage2(self.stage1(x))

    torch.manual_seed(0)
    model = TwoStages().eval()
    x = torch.randn(1, channels, side, side)
    path = folder / "two_stages.onnx"
    torch.onnx.export(model, (x,), str(path), input_names=["x"], output_names=["y"], opset_version=17)
    rng = np.random.default_rng(0)
    np.save(folder / "inputs.npy", rng.standard_normal((requests, 1, channels, side, side)).astype(np.float32))
    return path


def compile_artifact(cli, model, out, flags):
    subprocess.run([cli, "compile", str(model), "-o", str(out), *flags], check=True, capture_output=True, text=True)


def serve_all(model, cell, inputs, in_flight):
    """Every input served once the cell's way; the outputs in order."""
    if cell != "pipelined":
        return [model.run(x, record_stats=False) for x in inputs]
    pending, outputs = [], []
    for x in inputs:
        if len(pending) == in_flight:
            outputs.append(pending.pop(0).result())
        pending.append(model.run_async(x, record_stats=False))
    outputs.extend(f.result() for f in pending)
    return outputs


def serve(cell, artifact, inputs_path, in_flight):
    """One cell, in this process: requests per second, and a checksum of the outputs."""
    import switchyard as sy
    model = sy.runtime.load(artifact, max_in_flight=max(in_flight, 1))
    inputs = np.load(inputs_path)
    # A whole untimed pass first, served as the cell serves: the first few
    # hundred requests of a process run slower (pages, primitives, workers,
    # each in-flight request's workspace; measured: a pipeline's first 200
    # requests at 500/s, the next 200 at 770/s).
    serve_all(model, cell, inputs, in_flight)
    start = time.perf_counter()
    outputs = []
    for _ in range(PASSES):
        outputs = serve_all(model, cell, inputs, in_flight)
    elapsed = time.perf_counter() - start
    checksum = float(np.sum([np.sum(o, dtype=np.float64) for o in outputs]))
    return {"requests_per_s": PASSES * len(inputs) / elapsed, "checksum": checksum}


def start_cell(build, cell, artifact, inputs_path, in_flight):
    return subprocess.Popen([sys.executable, __file__, "--build", str(build), "--cell", cell, "--artifact",
                             str(artifact), "--inputs", str(inputs_path), "--in-flight", str(in_flight)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def result_of(process):
    out, err = process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"a cell failed (exit {process.returncode}): {err.strip()[-2000:]}")
    return json.loads(out.strip().splitlines()[-1])


def measure(build, cell, artifact, inputs_path, in_flight):
    return result_of(start_cell(build, cell, artifact, inputs_path, in_flight))


def measure_two_at_once(build, artifacts, inputs_path):
    """Two one-core builds (cores 0 and 1) serving at once: their summed rate,
    and the checksum both must give."""
    processes = [start_cell(build, "in turn", a, inputs_path, 0) for a in artifacts]
    results = [result_of(p) for p in processes]
    if results[0]["checksum"] != results[1]["checksum"]:
        raise RuntimeError(f"the two one-core builds disagree: {results}")
    return {"requests_per_s": sum(r["requests_per_s"] for r in results), "checksum": results[0]["checksum"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--in-flight", type=int, default=4, help="most pipelined requests in flight")
    parser.add_argument("--channels", type=int, default=64)
    parser.add_argument("--side", type=int, default=28)
    parser.add_argument("--blocks", type=int, default=3, help="basic blocks per stage")
    parser.add_argument("--cell", help=argparse.SUPPRESS)
    parser.add_argument("--artifact", help=argparse.SUPPRESS)
    parser.add_argument("--inputs", help=argparse.SUPPRESS)
    args = parser.parse_args()
    build = Path(args.build).resolve()
    sys.path.insert(0, str(build / "python"))
    if args.cell:
        print(json.dumps(serve(args.cell, args.artifact, args.inputs, args.in_flight)))
        return 0
    cli = str(build / "bin" / "switchyard")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        model = export(folder, args.channels, args.side, args.blocks, args.requests)
        compile_artifact(cli, model, folder / "split.art",
                         ["--devices", "cpu:0,cpu:1", "--place", "node:/stage1/*=cpu:0", "--place",
                          "node:/stage2/*=cpu:1", "--cores", "cpu:0=0", "--cores", "cpu:1=1"])
        compile_artifact(cli, model, folder / "one_core.art", ["--devices", "cpu:0", "--cores", "cpu:0=0"])
        compile_artifact(cli, model, folder / "one_core_1.art", ["--devices", "cpu:0", "--cores", "cpu:0=1"])
        compile_artifact(cli, model, folder / "two_threads.art", ["--devices", "cpu:0", "--cores", "cpu:0=0-1"])
        manifest = json.loads((folder / "split.art" / "manifest.json").read_text())
        on = {d["name"]: sum(k["device"] == i for k in manifest["kernels"]) for i, d in enumerate(manifest["devices"])}
        print("split artifact's kernels per device:", ", ".join(f"{name} {count}" for name, count in on.items()))
        inputs = folder / "inputs.npy"
        cells = {"pipelined": ("split.art", args.in_flight), "split, in turn": ("split.art", 0),
                 "one core": ("one_core.art", 0), "two threads": ("two_threads.art", 0),
                 "two at once": (("one_core.art", "one_core_1.art"), 0)}
        rates = {name: [] for name in cells}
        checksums = {name: set() for name in cells}
        probes = [core_share.two_core_share(build)]
        for _ in range(args.rounds):
            for name, (artifact, in_flight) in cells.items():
                if isinstance(artifact, tuple):
                    result = measure_two_at_once(build, [folder / a for a in artifact], inputs)
                else:
                    cell = "pipelined" if in_flight else "in turn"
                    result = measure(build, cell, folder / artifact, inputs, in_flight)
                rates[name].append(result["requests_per_s"])
                checksums[name].add(result["checksum"])
        probes.append(core_share.two_core_share(build))
    if checksums["pipelined"] != checksums["split, in turn"] or len(checksums["pipelined"]) != 1:
        print(f"MISMATCH: pipelined outputs {checksums['pipelined']} != in turn {checksums['split, in turn']}")
        return 1
    medians = {name: statistics.median(values) for name, values in rates.items()}
    for name, value in medians.items():
        print(f"{name:16s} median {value:8.1f} requests/s  (rounds: {', '.join(f'{r:.1f}' for r in rates[name])})")
    pipelined = medians["pipelined"]
    for name in ("one core", "two threads", "split, in turn", "two at once"):
        print(f"ratio pipelined / {name}: {pipelined / medians[name]:.2f}")
    print(f"ratio two at once / one core: {medians['two at once'] / medians['one core']:.2f} (the machine's ceiling)")
    for when, probe in zip(("before", "after"), probes):
        print(f"{when} the rounds: {core_share.describe(probe)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
