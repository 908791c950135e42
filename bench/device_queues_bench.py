"""Two equal towers on two devices that run at once (issue 38, "Devices that
run at once"; docs/design.md).

The model: two MobileNetV2-like towers (inverted residual blocks of a 1x1
expansion, a 3x3 depthwise convolution and a 1x1 projection, with ReLU6) on
two inputs, their results summed. It is compiled

  (a) on one device, cpu:0, with 2 threads (`--cores cpu:0=0-1`);
  (b) split: tower A on cpu:0, tower B on cpu:1 (`--place node:/tower_a/*`,
      `--place node:/tower_b/*`), `--cores cpu:0=0 --cores cpu:1=1`,

and (b) runs at once (each device's queue on its worker, one core each) and
in order (`switchyard run --in-order`: every step on the calling thread);
  (c) placed by the planner alone: `switchyard profile` measures the cost
      file on cpu:0 and cpu:1 (one core each), and `--objective latency
      --costs` splits the model with no --place wish;
and ONNX Runtime (npm's onnxruntime-node, as bench/peers installs it) runs
the same export with two intra-op threads and with its parallel executor
(two inter-op threads, one intra-op).
Every cell is run `--rounds` times, interleaved (so the shared machine's
background load touches every cell alike); the median of the rounds'
medians is printed, with the ratios.

    /usr/bin/python3 bench/device_queues_bench.py --build build [--rounds 5] [--repeat 200]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
LATENCY_LINE = re.compile(r"^latency_ms median=([\d.]+) min=([\d.]+) p90=([\d.]+) runs=(\d+)$", re.M)


class InvertedResidual(torch.nn.Module):
    def __init__(self, channels, expansion):
        super().__init__()
        hidden = channels * expansion
        self.expand = torch.nn.Conv2d(channels, hidden, 1)
        self.depthwise = torch.nn.Conv2d(hidden, hidden, 3, padding=1, groups=hidden)
        self.project = torch.nn.Conv2d(hidden, channels, 1)

    def forward(self, x):
        y = torch.nn.functional.relu6(self.expand(x))
        y = torch.nn.functional.relu6(self.depthwise(y))
        return x + self.project(y)


class TwoTowers(torch.nn.Module):
    def __init__(self, channels=24, blocks=4, expansion=6):
        super().__init__()
        self.tower_a = torch.nn.Sequential(*[InvertedResidual(channels, expansion) for _ in range(blocks)])
        self.tower_b = torch.nn.Sequential(*[InvertedResidual(channels, expansion) for _ in range(blocks)])

    def forward(self, a, b):
        return self.tower_a(a) + self.tower_b(b)


def export(folder, side):
    torch.manual_seed(0)
    model = TwoTowers().eval()
    a, b = torch.randn(1, 24, side, side), torch.randn(1, 24, side, side)
    path = folder / "two_towers.onnx"
    torch.onnx.export(model, (a, b), str(path), input_names=["a", "b"], output_names=["sum"], opset_version=17)
    np.save(folder / "a.npy", a.numpy())
    np.save(folder / "b.npy", b.numpy())
    return path


def compile_artifact(cli, model, out, flags):
    return subprocess.run([cli, "compile", str(model), "-o", str(out), *flags], check=True, capture_output=True,
                          text=True).stdout


def ort_latency(node_modules, model, folder, repeat, intra, inter):
    env = dict(os.environ, NODE_PATH=str(node_modules))
    run = subprocess.run(["node", str(HERE / "peers" / "ort_bench.js"), "--model", str(model), "--input",
                          f"{folder / 'a.npy'},{folder / 'b.npy'}", "--threads", str(intra), "--inter-threads",
                          str(inter), "--runs", str(repeat)], check=True, capture_output=True, text=True, env=env)
    return json.loads(run.stdout.strip().splitlines()[-1])["latency_ms"]["median"]


def placed_devices(folder):
    """The devices the latency planner gave the split artifact's kernels."""
    manifest = json.loads((folder / "latency.art" / "manifest.json").read_text())
    return sorted({kernel["device"] for kernel in manifest["kernels"]})


def median_latency(cli, artifact, folder, repeat, extra):
    run = subprocess.run([cli, "run", str(artifact), "--input", f"a={folder / 'a.npy'}", "--input",
                          f"b={folder / 'b.npy'}", "-o", str(folder / "out"), "--repeat", str(repeat), *extra],
                         check=True, capture_output=True, text=True)
    return float(LATENCY_LINE.search(run.stdout).group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--side", type=int, default=28, help="the towers' image side")
    args = parser.parse_args()
    cli = str(Path(args.build).resolve() / "bin" / "switchyard")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        model = export(folder, args.side)
        compile_artifact(cli, model, folder / "one.art", ["--devices", "cpu:0", "--cores", "cpu:0=0-1"])
        compile_artifact(cli, model, folder / "split.art",
                         ["--devices", "cpu:0,cpu:1", "--place", "node:/tower_a/*=cpu:0", "--place",
                          "node:/tower_b/*=cpu:1", "--cores", "cpu:0=0", "--cores", "cpu:1=1"])
        cores = ["--cores", "cpu:0=0", "--cores", "cpu:1=1"]
        profiled = subprocess.run([cli, "profile", str(model), "--device", "cpu:0", "--device", "cpu:1", *cores, "-o",
                                   str(folder / "costs.json")], check=True, capture_output=True, text=True).stdout
        compiled = compile_artifact(cli, model, folder / "latency.art", ["--devices", "cpu:0,cpu:1", "--objective",
                                                                         "latency", "--costs", str(folder / "costs.json"),
                                                                         *cores])
        # What the profile measured and how the plan chose: a profile taken
        # while the machine's cores ran as one shows here, not only in (c).
        print("profile:", *[line for line in profiled.splitlines() if "run" in line or "split check" in line], sep="\n  ")
        print("latency build:", compiled.splitlines()[-1])
        print("devices the latency objective used:", ", ".join(str(d) for d in placed_devices(folder)))
        cells = {"(a) one device, 2 threads": lambda: median_latency(cli, folder / "one.art", folder, args.repeat, []),
                 "(b) split, at once": lambda: median_latency(cli, folder / "split.art", folder, args.repeat, []),
                 "(b) split, in order": lambda: median_latency(cli, folder / "split.art", folder, args.repeat,
                                                               ["--in-order"]),
                 "(c) --objective latency": lambda: median_latency(cli, folder / "latency.art", folder, args.repeat,
                                                                   [])}
        node_modules = Path(args.build).resolve() / "peers" / "node_modules"
        if (node_modules / "onnxruntime-node").exists():
            cells["ORT, 2 intra-op threads"] = lambda: ort_latency(node_modules, model, folder, args.repeat, 2, 1)
            cells["ORT, parallel executor 2x1"] = lambda: ort_latency(node_modules, model, folder, args.repeat, 1, 2)
        else:
            print(f"ONNX Runtime not measured: {node_modules} has no onnxruntime-node (bench/peers/run_peers.py "
                  "installs it)")
        times = {name: [] for name in cells}
        for _ in range(args.rounds):
            for name, measure in cells.items():
                times[name].append(measure())
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, value in medians.items():
        print(f"{name:28s} median {value:.3f} ms  (rounds: {', '.join(f'{t:.3f}' for t in times[name])})")
    a, at_once, in_order, latency = list(medians.values())[:4]
    print(f"ratio (b) at once / (a): {at_once / a:.2f}")
    print(f"ratio (b) at once / (b) in order: {at_once / in_order:.2f}")
    print(f"ratio (c) latency objective / (a): {latency / a:.2f}")
    for name in ("ORT, 2 intra-op threads", "ORT, parallel executor 2x1"):
        if name in medians:
            print(f"ratio (c) latency objective / {name}: {latency / medians[name]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
