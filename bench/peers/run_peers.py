"""Switchyard against ONNX Runtime and PyTorch on a model set (tests/models/suites.py):
the five-model suite (the quick check) or, with --suite zoo, the model zoo
(bench/zoo/).

For each model and thread count, one process at a time: Switchyard compiles
the ONNX file (cold kernel cache, then cached) and runs it, checking its
output against PyTorch's; ONNX Runtime (ort_bench.js, npm's
onnxruntime-node) and PyTorch eager (torch_bench.py) run the same model.
All of that is done in several rounds, the peers' order turning from round
to round, and every figure is the median over the rounds (rounds.py).
Prints a Markdown table and writes it, with every figure, as JSON.

    /usr/bin/python3 bench/peers/run_peers.py --build build [--suite zoo] [--models mlp,resnet18]
        [--threads 1,2] [--runs 50] [--rounds 3]
"""
import argparse
import datetime
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests" / "models"))
import suites  # noqa: E402
from export_models import default_cache_dir, model_files  # noqa: E402
from measure import run_measured  # noqa: E402
import core_share  # noqa: E402
import report  # noqa: E402
from rounds import merge as merge_rounds  # noqa: E402
import switchyard_peer  # noqa: E402
from qdq_suite_model import PYTORCH_ERROR as QDQ_PYTORCH_ERROR, QDQ_MODELS, TOLERANCE as QDQ_TOLERANCE  # noqa: E402
from qdq_suite_model import ensure_qdq_files  # noqa: E402

# Pinned, so that figures from different days compare the same peer.
ONNXRUNTIME_NODE = "onnxruntime-node@1.30.0"

# Per model set: counted runs per measurement and where the results go
# (under the build folder). The zoo's models are larger and many, so fewer
# runs each.
SUITE_DEFAULTS = {"suite": {"runs": 50, "results": "peers"}, "zoo": {"runs": 20, "results": "zoo"}}


def log(message):
    print(message, file=sys.stderr, flush=True)


def ensure_exported(suite, folder, names):
    missing = [n for n in names if not all(p.exists() for p in model_files(folder, n))]
    if missing:
        log(f"exporting {', '.join(missing)} into {folder}")
        # Its failures show up below as missing files, per model.
        subprocess.run([sys.executable, str(REPO / "tests/models/export_models.py"), "--suite", suite, "--out",
                        str(folder), "--models", ",".join(missing)], stdout=sys.stderr)


def ensure_onnxruntime(prefix):
    """npm's onnxruntime-node under `prefix` (the build folder, never the
    repository). Its install script only fetches GPU binaries, so it is
    skipped: the CPU library ships in the package and works offline."""
    if (prefix / "node_modules/onnxruntime-node/package.json").exists():
        return None
    prefix.mkdir(parents=True, exist_ok=True)
    log(f"installing {ONNXRUNTIME_NODE} into {prefix}")
    m = run_measured(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--prefix", str(prefix),
                      ONNXRUNTIME_NODE])
    return None if m.ok() else f"npm install: {m.first_error_line()}"


def run_json_peer(command, env=None, timeout_s=None):
    """Runs a peer that prints one JSON object; adds its measured peak memory."""
    m = run_measured(command, env=env, timeout_s=timeout_s)
    if not m.ok():
        return {"error": m.first_error_line()}
    try:
        figures = json.loads(m.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return {"error": f"no JSON line in its output: {m.first_error_line()}"}
    figures["process_peak_rss_mib"] = m.peak_rss_mib  # GNU time's, next to the peer's own
    return figures


def run_ort(node_modules, files, threads, args):
    env = dict(os.environ, NODE_PATH=str(node_modules))
    onnx, inputs, expected, _ = files
    return run_json_peer(["node", str(HERE / "ort_bench.js"), "--model", onnx, "--input", inputs, "--expected",
                          expected, "--threads", threads, "--warmup", args.warmup, "--runs", args.runs],
                         env=env, timeout_s=args.timeout)


def pytorch_problem():
    """Why PyTorch cannot be measured as intended, or None."""
    status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", "libopenblas0-openmp"], capture_output=True,
                            text=True).stdout
    # Debian's PyTorch takes its BLAS from the libblas alternative; without
    # this package it would be compared on the slow reference BLAS.
    return None if "install ok installed" in status else "libopenblas0-openmp is not installed"


def run_pytorch(name, files, threads, args):
    # OPENBLAS_CORETYPE pins OpenBLAS to one kernel set; PyTorch (which uses
    # OpenBLAS) is compared as it runs by default, so it is unset for it alone.
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    return run_json_peer([sys.executable, str(HERE / "torch_bench.py"), "--suite", args.suite, "--model", name,
                          "--threads", threads,
                          "--warmup", args.warmup, "--runs", args.runs, "--expected", files[2]],
                         env=env, timeout_s=args.timeout)


def cpu_model():
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def fma_peak_gflops(build):
    """One core's single-precision FMA peak (bench/fma_peak_bench.cc), the
    yardstick for every GFLOP/s figure; None when the benchmark is not built."""
    binary = build / "bin" / "fma_peak_bench"
    if not binary.exists():
        return None
    out = subprocess.run([str(binary), "--benchmark_format=json"], capture_output=True, text=True).stdout
    rates = [b["GFLOP/s"] for b in json.loads(out or "{}").get("benchmarks", []) if "GFLOP/s" in b]
    return round(max(rates), 1) if rates else None


def commit():
    def git(*a):
        return subprocess.run(["git", "-C", str(REPO), *a], capture_output=True, text=True).stdout.strip()
    return git("rev-parse", "--short", "HEAD") + (" (uncommitted changes)" if git("status", "--porcelain") else "")


PEERS = ("switchyard", "ort", "pytorch")

# Counted runs span at least this long, for every peer alike: ten runs of a
# 0.03 ms model are 0.3 ms of measurement, which one stall of the machine's
# other vCPU covers whole (the MLP at two threads read 0.35 ms in one
# process in twelve, 0.024-0.040 in the rest).
MIN_MEASURED_S = 0.2
MOST_RUNS_FACTOR = 100  # at most this many times --runs


def counted_runs(switchyard, work, inputs, expected, threads, args, tolerance):
    """--runs, raised so that the counted runs of the model span
    MIN_MEASURED_S by Switchyard's latency in a short probe."""
    probe = switchyard_peer.run_figures(switchyard, work, inputs, expected, threads, 3, args.timeout, tolerance)
    if "error" in probe:
        return args.runs
    latency_s = max(report.median_ms(probe), 1e-3) / 1e3
    return min(max(args.runs, math.ceil(MIN_MEASURED_S / latency_s)), args.runs * MOST_RUNS_FACTOR)


def one_round(index, name, files, args, switchyard, node_modules, ort_error, pytorch_error, work):
    """Compiles the model once (cold, then cached) and runs every peer once
    per thread count, the peers' order turned by the round's index.
    Returns (compile figures, {threads: {peer: figures}})."""
    description = json.loads(files[3].read_text())
    inputs = {description["input"]: files[1]}
    expected = np.load(files[2])
    quantized = name in QDQ_MODELS
    tolerance = QDQ_TOLERANCE if quantized else switchyard_peer.TOLERANCE
    if quantized:
        pytorch_error = QDQ_PYTORCH_ERROR
    log(f"{name}, round {index + 1}: Switchyard compile")
    compiled = switchyard_peer.compile_figures(switchyard, files[0], work, args.timeout)
    log("  " + (compiled["error"] if "error" in compiled else
                f"{compiled['compile_cold_s']:.2f} s cold, {compiled['compile_cached_s']:.2f} s cached"))
    runners = {
        "switchyard": lambda t, a: compiled if "error" in compiled else
        switchyard_peer.run_figures(switchyard, work, inputs, expected, t, a.runs, a.timeout, tolerance),
        "ort": lambda t, a: {"error": ort_error} if ort_error else run_ort(node_modules, files, t, a),
        "pytorch": lambda t, a: {"error": pytorch_error} if pytorch_error else run_pytorch(name, files, t, a),
    }
    order = PEERS[index % len(PEERS):] + PEERS[:index % len(PEERS)]
    measured = {}
    for t in args.thread_counts:
        runs = args.runs if "error" in compiled else counted_runs(switchyard, work, inputs, expected, t, args, tolerance)
        these = argparse.Namespace(**{**vars(args), "runs": runs})
        measured[t] = {peer: runners[peer](t, these) for peer in order}
        log(f"  {t} thread(s): " + ", ".join(
            f"{peer} " + (measured[t][peer]["error"] if "error" in measured[t][peer] else
                          f"{report.median_ms(measured[t][peer]):.3f} ms") for peer in order))
    # The next round's cold compile writes its artifact anew, as a user's does.
    shutil.rmtree(work, ignore_errors=True)
    return compiled, measured


def failed_rows(name, args, error):
    failure = {"error": error}
    return [dict(model=name, threads=t, compile=failure, switchyard=failure, ort=failure, pytorch=failure)
            for t in args.thread_counts]


def benchmark_model(name, args, switchyard, node_modules, ort_error, pytorch_error, work):
    files = model_files(args.models_dir, name)
    if not all(p.exists() for p in files):
        return failed_rows(name, args, "export failed (see export_models.py above)")
    # Every peer then reads the model from the page cache: Switchyard's cold
    # compile, first in line, paid ResNet-50's 100 MB read from disk (1-2 s).
    files[0].read_bytes()
    rounds = [one_round(i, name, files, args, switchyard, node_modules, ort_error, pytorch_error, work / f"round-{i}")
              for i in range(args.rounds)]
    compiled = merge_rounds([c for c, _ in rounds])
    return [dict(model=name, threads=t, compile=compiled,
                 **{peer: merge_rounds([m[t][peer] for _, m in rounds]) for peer in PEERS})
            for t in args.thread_counts]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", type=Path, default=REPO / "build", help="build folder (default: build)")
    parser.add_argument("--suite", choices=list(SUITE_DEFAULTS), default="suite",
                        help="the model set: the five-model suite or the zoo (default: %(default)s)")
    parser.add_argument("--models", help="comma-separated names (default: all of the set's)")
    parser.add_argument("--threads", default="1,2", help="thread counts (default: %(default)s)")
    parser.add_argument("--runs", type=int, help="counted runs per measurement (default: 50, the zoo 20)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, each running every peer once per "
                        "model and thread count, in turned order; figures are medians over them (default: 3)")
    parser.add_argument("--warmup", type=int, default=5, help="ONNX Runtime and PyTorch warm-up runs "
                        "(Switchyard's run does one; default: 5)")
    parser.add_argument("--models-dir", type=Path, help="the exports' folder (default: ~/.cache/switchyard/SUITE)")
    parser.add_argument("--json", type=Path, help="default: BUILD/peers/results.json for the suite, "
                        "BUILD/zoo/results.json for the zoo (and .md next to it)")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per step (default: 3600)")
    args = parser.parse_args()
    defaults = SUITE_DEFAULTS[args.suite]
    args.runs = defaults["runs"] if args.runs is None else args.runs
    args.models_dir = args.models_dir or default_cache_dir(args.suite)
    args.thread_counts = [int(t) for t in args.threads.split(",") if t]
    known = dict(suites.models_of(args.suite).MODELS)
    if args.suite == "suite":  # its QDQ member, made from a float one (qdq_suite_model.py)
        known.update(QDQ_MODELS)
    names = [n for n in (args.models or ",".join(known)).split(",") if n]
    if unknown := [n for n in names if n not in known]:
        parser.error(f"unknown {args.suite} model(s) {', '.join(unknown)}; known: {', '.join(known)}")
    if args.runs < 1 or args.rounds < 1 or not args.thread_counts or min(args.thread_counts) < 1:
        parser.error("--runs, --rounds and every --threads count must be at least 1")
    switchyard = (args.build / "bin" / "switchyard").resolve()
    if not switchyard.exists():
        parser.error(f"{switchyard} is missing: build it first (ninja -C {args.build} switchyard)")
    json_path = args.json or args.build / defaults["results"] / "results.json"

    quantized = [n for n in names if n in QDQ_MODELS]
    ensure_exported(args.suite, args.models_dir,
                    [n for n in names if n not in QDQ_MODELS] + [QDQ_MODELS[n] for n in quantized])
    ort_error = ensure_onnxruntime(args.build / "peers")
    if shutil.which("node") is None:
        ort_error = "node is not installed"
    for name in quantized:
        # Its reference output is ONNX Runtime's, so it needs ONNX Runtime.
        problem = ort_error or ensure_qdq_files(name, args.models_dir, args.build, args.build / "peers" / "node_modules")
        if problem:
            log(f"{name}: {problem}")
    result = dict(suite=args.suite, cpu=cpu_model(), cores=os.cpu_count(), fma_peak_gflops=fma_peak_gflops(args.build),
                  commit=commit(), runs=args.runs, rounds=args.rounds, warmup=args.warmup,
                  date=datetime.datetime.now().isoformat(timespec="seconds"),
                  load_average_start=" ".join(f"{x:.2f}" for x in os.getloadavg()), rows=[])
    if max(args.thread_counts) > 1:
        result["two_core_share_start"] = core_share.two_core_share(args.build)
    work = Path(tempfile.mkdtemp(prefix="sy-peers-"))
    try:
        for name in names:
            load = " ".join(f"{x:.2f}" for x in os.getloadavg())
            probe = core_share.two_core_share(args.build) if max(args.thread_counts) > 1 else None
            try:
                rows = benchmark_model(name, args, switchyard, args.build / "peers" / "node_modules", ort_error,
                                       pytorch_problem(), work / name)
            except Exception as e:  # one model's surprise must not lose the others' figures
                log(f"{name}: {type(e).__name__}: {e}")
                rows = failed_rows(name, args, f"harness: {type(e).__name__}: {str(e)[:200]}")
            for row in rows:
                row["load_average_start"] = load
                row["two_core_share"] = probe
            result["rows"] += rows
            # A long run (the zoo's) keeps what it measured so far.
            write_results(result, json_path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    table = write_results(result, json_path)
    print(table, end="")
    log(f"written {json_path} and {json_path.with_suffix('.md')}")


def write_results(result, json_path):
    """Completes `result` with ratios, means and versions from its rows so
    far, writes it as JSON and its table as Markdown; returns the table."""
    result["load_average_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    for row in result["rows"]:
        report.add_ratios(row)
    result["geometric_mean"] = report.geometric_means(result["rows"])
    result["versions"] = {r[p]["peer"]: r[p]["version"] for r in result["rows"] for p in ("ort", "pytorch")
                          if "version" in r[p]}
    table = report.markdown(result)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(result, indent=2) + "\n")
    json_path.with_suffix(".md").write_text(table)
    return table


if __name__ == "__main__":
    main()
