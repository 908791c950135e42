#!/usr/bin/env python3
"""Every zoo model compiled for one device and split across two, run, and
compared with PyTorch's stored output (the error relative to the output's
largest magnitude; 1e-4 is the goal). Prints a line per model and path and
exits 1 if any is off or fails.

    /usr/bin/python3 bench/zoo/check_accuracy.py --build build [--models densenet121,gpt2]

The zoo must be exported first (tests/models/export_models.py --suite zoo,
which run_peers.py also does). A model the importer refuses is a failure
line with the refusal's first line.
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

TOLERANCE = 1e-4


def check(switchyard, zoo, name, devices, scratch):
    """(ok, line) for one model on one device list."""
    meta = json.loads((zoo / f"{name}.json").read_text())
    expected = np.load(zoo / f"{name}.expected.npy")
    artifact = scratch / f"{name}.{devices.count(',') + 1}.art"
    started = time.perf_counter()
    built = subprocess.run([switchyard, "compile", str(zoo / f"{name}.onnx"), "-o", str(artifact),
                            "--devices", devices], capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if built.returncode != 0:
        return False, f"compile failed: {built.stderr.strip().splitlines()[0] if built.stderr.strip() else built.returncode}"
    out = scratch / f"{name}.out"
    ran = subprocess.run([switchyard, "run", str(artifact), "-i", f"{meta['input']}={zoo / (name + '.input.npy')}",
                          "--output-dir", str(out)], capture_output=True, text=True)
    if ran.returncode != 0:
        return False, f"run failed: {ran.stderr.strip().splitlines()[0] if ran.stderr.strip() else ran.returncode}"
    actual = np.load(sorted(out.glob("*.npy"))[0])
    if actual.shape != expected.shape:
        return False, f"shape {actual.shape}, PyTorch's {expected.shape}"
    error = float(np.max(np.abs(actual.astype(np.float64) - expected)) / max(float(np.max(np.abs(expected))), 1e-30))
    ok = bool(np.isfinite(error)) and error <= TOLERANCE
    return ok, f"compile {seconds:.1f} s, error {error:.2e} of the largest magnitude"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", type=pathlib.Path, default=pathlib.Path("build"))
    parser.add_argument("--zoo", type=pathlib.Path, default=pathlib.Path.home() / ".cache/switchyard/zoo")
    parser.add_argument("--models", help="comma-separated names (default: every exported one)")
    args = parser.parse_args()
    switchyard = str(args.build / "bin/switchyard")
    names = args.models.split(",") if args.models else sorted(p.stem for p in args.zoo.glob("*.onnx"))
    if not names:
        sys.exit(f"no models in {args.zoo}: export them with tests/models/export_models.py --suite zoo")
    failures = 0
    with tempfile.TemporaryDirectory() as scratch:
        for name in names:
            for devices in ("cpu:0", "cpu:0,cpu:1"):
                ok, line = check(switchyard, args.zoo, name, devices, pathlib.Path(scratch))
                failures += not ok
                print(f"{name:32} {devices:12} {'ok ' if ok else 'OFF'} {line}", flush=True)
    print(f"{len(names)} models, {failures} off or failing")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
