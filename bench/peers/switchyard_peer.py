"""The Switchyard side of the peer benchmark: compile (cold, then cached), run, check.

Every step returns what it measured, or the first line of its error, so an
operator the importer does not support yet becomes a table cell, not a crash.
"""
import json
import os
import re
import tempfile
from pathlib import Path

import numpy as np

from measure import run_measured

STARTUP_LINE = re.compile(r"^startup_ms load=([\d.]+) first_run=([\d.]+)$", re.M)
LATENCY_LINE = re.compile(r"^latency_ms median=([\d.]+) min=([\d.]+) p90=([\d.]+) runs=(\d+)$", re.M)
TOLERANCE = 1e-4  # max |actual - expected| over max |expected|


class StepFailed(Exception):
    pass


def compile_model(switchyard, model, work, timeout_s):
    """Compiles `model` twice, into work/artifact: once with an empty kernel
    cache (a fresh XDG_CACHE_HOME) and once more with the cache that left."""
    cache = tempfile.mkdtemp(prefix="cache-", dir=work)
    env = dict(os.environ, XDG_CACHE_HOME=cache)
    result = {}
    for label, artifact in (("cold", work / "artifact-cold"), ("cached", work / "artifact")):
        m = run_measured([str(switchyard), "compile", str(model), "-o", str(artifact), "--devices", "cpu:0"],
                         env=env, timeout_s=timeout_s)
        if not m.ok():
            raise StepFailed(f"compile: {m.first_error_line()}")
        result[f"compile_{label}_s"] = m.wall_s
        result[f"compile_{label}_peak_rss_mib"] = m.peak_rss_mib
    return result


def relative_error(actual, expected):
    if actual.shape != expected.shape:
        raise StepFailed(f"output shape {actual.shape}, expected {expected.shape}")
    error = float(np.abs(actual.astype(np.float64) - expected).max())
    scale = float(np.abs(expected).max())
    return error / scale if scale > 0 else error


def output_file(artifact):
    """The file `switchyard run` writes the first output to: its manifest name
    with characters other than letters, digits and '_' as '_' (docs/onnx.md)."""
    name = json.loads((Path(artifact) / "manifest.json").read_text())["outputs"][0]["name"]
    return re.sub(r"[^A-Za-z0-9_]", "_", name) + ".npy"


def run_artifact(switchyard, artifact, inputs, expected, threads, runs, work, timeout_s, tolerance=TOLERANCE):
    """Runs the artifact runs + 1 times (`switchyard run` counts all but the
    warm-up) and checks its first output against `expected`, within
    `tolerance` (relative_error)."""
    out = work / f"out-{threads}"
    command = [str(switchyard), "run", str(artifact), "--output-dir", str(out), "--repeat", str(runs + 1),
               "--threads", str(threads)]
    for name, path in inputs.items():
        command += ["--input", f"{name}={path}"]
    m = run_measured(command, timeout_s=timeout_s)
    if not m.ok():
        raise StepFailed(f"run: {m.first_error_line()}")
    found = LATENCY_LINE.findall(m.stdout)
    if not found:
        raise StepFailed("run: no latency_ms line in its output")
    median, fastest, p90, counted = found[-1]
    startup = STARTUP_LINE.findall(m.stdout)
    error = relative_error(np.load(out / output_file(artifact)), expected)
    return {
        "latency_ms": {"median": float(median), "min": float(fastest), "p90": float(p90)},
        "load_plus_first_run_s": (float(startup[-1][0]) + float(startup[-1][1])) / 1e3 if startup else None,
        "runs": int(counted),
        "peak_rss_mib": m.peak_rss_mib,
        "relative_error": error,
        "check": "ok" if error <= tolerance else f"relative error {error:.3g} > {tolerance:g}",
    }


def compile_figures(switchyard, model, work, timeout_s):
    """compile_model's figures, or {"error": why}."""
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    try:
        return compile_model(switchyard, model, work, timeout_s)
    except StepFailed as e:
        return {"error": str(e)}


def run_figures(switchyard, work, inputs, expected, threads, runs, timeout_s, tolerance=TOLERANCE):
    """run_artifact's figures for the artifact compile_figures left in
    `work`, or {"error": why}."""
    try:
        return run_artifact(switchyard, Path(work) / "artifact", inputs, expected, threads, runs, Path(work),
                            timeout_s, tolerance)
    except StepFailed as e:
        return {"error": str(e)}
