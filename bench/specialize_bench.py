"""A specialised ResNet (`switchyard compile --specialize batch=1,8`) against
static builds for each batch, in the same run: latency per batch (1 and 8
compiled; others run in chunks: 4 as 1+1+1+1, 9 as 8+1), artifact size, peak
memory of a process that loads and runs it at each batch, and compile time of
three specialisations against one static build (each with a cold kernel cache).

    PYTHONPATH=build/python /usr/bin/python3 bench/specialize_bench.py [--work DIR] [--rounds 5]
        [--model resnet50 --batches 1,2,8,32]   (issue 37's ResNet-50 goal)

The model is exported from torchvision (seeded random weights: latency does
not depend on them) with a dynamic batch axis (torch.onnx.export's dynamic_axes).
"""
import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
BUILD = pathlib.Path(os.environ.get("SY_BUILD_DIR", REPO / "build"))
SWITCHYARD = BUILD / "bin" / "switchyard"


def export_resnet(name, path):
    import torch
    import torchvision
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)().eval()
    torch.onnx.export(model, torch.randn(1, 3, 224, 224), str(path), input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}}, opset_version=13)


def compile_model(args, cache):
    """Runs `switchyard compile`, its kernel cache in `cache` (None: the default); returns seconds."""
    env = dict(os.environ)
    if cache is not None:
        shutil.rmtree(cache, ignore_errors=True)
        env["XDG_CACHE_HOME"] = str(cache)
    start = time.perf_counter()
    done = subprocess.run([str(SWITCHYARD), "compile", *map(str, args), "--rebuild"], capture_output=True, text=True,
                          env=env)
    if done.returncode != 0:
        sys.exit(done.stderr)
    return time.perf_counter() - start


def tree_bytes(path):
    return sum(f.stat().st_size for f in pathlib.Path(path).rglob("*") if f.is_file())


PEAK = """
import sys, numpy as np, switchyard as sy
model = sy.runtime.load(sys.argv[1])
for batch in map(int, sys.argv[2:]):
    x = np.ones((batch, 3, 224, 224), np.float32)
    for _ in range(3):
        model.run(input=x)
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent through fork and exec.
print([int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")][0])
"""


def peak_rss_mib(artifact, batches):
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"))
    done = subprocess.run([sys.executable, "-c", PEAK, str(artifact), *map(str, batches)], capture_output=True,
                          text=True, env=env, check=True)
    return int(done.stdout.split()[-1]) / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default="/tmp/h-specialize/bench", help="scratch folder (models, artifacts)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating timing rounds per batch")
    parser.add_argument("--skip-compile-time", action="store_true", help="skip the cold-cache compile-time figures")
    parser.add_argument("--model", default="resnet18", choices=["resnet18", "resnet50"])
    parser.add_argument("--batches", default="1,8,4,9", help="batches run (1 and 8 are the compiled ones)")
    args = parser.parse_args()
    work = pathlib.Path(args.work) / args.model
    work.mkdir(parents=True, exist_ok=True)
    onnx_path = work / f"{args.model}_dynamic.onnx"
    if not onnx_path.exists():
        export_resnet(args.model, onnx_path)
    print("load:", os.getloadavg())

    results = {}
    if not args.skip_compile_time:
        cache = work / "cold_cache"
        results["compile_s_static_batch1"] = compile_model(
            [onnx_path, "--input-shape", "input=1x3x224x224", "-o", work / "static1.art"], cache)
        results["compile_s_specialized_1_8_32"] = compile_model(
            [onnx_path, "--specialize", "batch=1,8,32", "-o", work / "spec3.art"], cache)
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(work / "spec3.art", ignore_errors=True)
    # The artifacts timed below, with a warm kernel cache.
    batches = [int(b) for b in args.batches.split(",")]
    batches += [b for b in (1, 8) if b not in batches]  # the sizes and peaks below compare with these
    for batch in batches:
        compile_model([onnx_path, "--input-shape", f"input={batch}x3x224x224", "-o", work / f"static{batch}.art"], None)
    compile_model([onnx_path, "--specialize", "batch=1,8", "-o", work / "spec.art"], None)

    import switchyard as sy
    spec = sy.runtime.load(work / "spec.art")
    static = {batch: sy.runtime.load(work / f"static{batch}.art") for batch in batches}
    for batch in batches:
        x = np.random.default_rng(batch).standard_normal((batch, 3, 224, 224)).astype(np.float32)
        np.testing.assert_allclose(spec.run(input=x), static[batch].run(input=x), rtol=1e-4, atol=1e-4)
        rounds = {"specialized": [], "static": []}
        pair = [("specialized", spec), ("static", static[batch])]
        for r in range(args.rounds):  # alternating, each first in turn, so load changes hit both alike
            for name, model in (pair if r % 2 == 0 else pair[::-1]):
                rounds[name].append(model.benchmark(repeat=5, input=x).median_ms)
        medians = {name: statistics.median(times) for name, times in rounds.items()}
        results[f"batch{batch}_ms"] = medians
        results[f"batch{batch}_ratio_specialized_over_static"] = medians["specialized"] / medians["static"]
    results["bytes"] = {"specialized_1_8": tree_bytes(work / "spec.art"), "static1": tree_bytes(work / "static1.art"),
                        "static8": tree_bytes(work / "static8.art")}
    results["peak_rss_mib"] = {"static1_loaded_not_run": peak_rss_mib(work / "static1.art", []),
                               "specialized_runs_1_and_8": peak_rss_mib(work / "spec.art", [1, 8])}
    for batch in batches:
        results["peak_rss_mib"][f"specialized_runs_{batch}"] = peak_rss_mib(work / "spec.art", [batch])
        results["peak_rss_mib"][f"static{batch}_runs_{batch}"] = peak_rss_mib(work / f"static{batch}.art", [batch])
    print("load:", os.getloadavg())
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
