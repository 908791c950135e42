"""ResNet-18's latency at 1 and 2 threads, alone and beside a process that
keeps core 0 busy, from the CLI and from Python (issue 39, item 12).

Threads that spin while they wait for a core the system has given to another
process turn a shared machine into a slowdown many times over; the aim is a
two-thread latency within 1.3x of the one-thread latency under that load,
and no loss when the machine is otherwise idle.

The load is `yes > /dev/null` pinned to core 0 with taskset. Each cell is run
`--rounds` times, interleaved with the others (so a change in the machine's
background load touches every cell alike), and the median of the rounds is
printed. Python runs in a fresh interpreter each time (a user's process:
`import switchyard`, then load and run), timing runs for `--seconds`.

    /usr/bin/python3 bench/contention_bench.py --build build [--rounds 3] [--seconds 1] [--compare-old-spin]

--compare-old-spin adds a row per cell with the spin the runtime had before
issue 39, set through the environment (which the runtime leaves alone):
the CLI restarted itself with GOMP_SPINCOUNT=10000, and Python kept
libgomp's default, 300,000, because NumPy loaded libgomp first.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "models"))
from export_models import default_cache_dir  # noqa: E402

LATENCY_LINE = re.compile(r"^latency_ms median=([\d.]+) min=([\d.]+) p90=([\d.]+) runs=(\d+)$", re.M)

# Run in a fresh interpreter: load the artifact, warm up, time runs for a while.
PYTHON_RUN = """
import json, sys, time
import numpy as np
import switchyard as sy
artifact, x_path, threads, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
model = sy.runtime.load(artifact, threads=threads)
x = np.load(x_path)
model.run(input=x)
times = []
end = time.perf_counter() + seconds
while time.perf_counter() < end or len(times) < 5:
    start = time.perf_counter()
    model.run(input=x)
    times.append((time.perf_counter() - start) * 1e3)
times.sort()
print(json.dumps({"median": times[len(times) // 2], "p90": times[min(len(times) - 1, (9 * len(times)) // 10)],
                  "runs": len(times)}))
"""


def ensure_model(suite):
    if not (suite / "resnet18.onnx").exists():
        subprocess.run([sys.executable, str(REPO / "tests/models/export_models.py"), "--out", str(suite), "--models",
                        "resnet18"], check=True)


OLD_SPIN = {"cli": "10000", "python": "300000"}


def cli_latency(switchyard, artifact, x_path, threads, repeat, env):
    done = subprocess.run([str(switchyard), "run", str(artifact), "--input", f"input={x_path}", "--output-dir",
                           str(artifact.parent / "out"), "--repeat", str(repeat), "--threads", str(threads)],
                          capture_output=True, text=True, check=True, env=env)
    median, _, p90, runs = LATENCY_LINE.findall(done.stdout)[-1]
    return {"median": float(median), "p90": float(p90), "runs": int(runs)}


def python_latency(build, artifact, x_path, threads, seconds, env):
    env = dict(env, PYTHONPATH=str(build / "python"))
    done = subprocess.run([sys.executable, "-c", PYTHON_RUN, str(artifact), str(x_path), str(threads), str(seconds)],
                          capture_output=True, text=True, check=True, env=env)
    return json.loads(done.stdout.strip().splitlines()[-1])


class BusyCore:
    """`yes > /dev/null` pinned to `core` while the block runs."""

    def __init__(self, core):
        self.core = core
        self.process = None

    def __enter__(self):
        self.process = subprocess.Popen(["taskset", "-c", str(self.core), "yes"], stdout=subprocess.DEVNULL)
        return self

    def __exit__(self, *exc):
        self.process.kill()
        self.process.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", type=Path, default=REPO / "build")
    parser.add_argument("--suite", type=Path, default=default_cache_dir())
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=1.0, help="Python: time runs for this long")
    parser.add_argument("--repeat", type=int, default=61, help="CLI: --repeat (the first run is a warm-up)")
    parser.add_argument("--compare-old-spin", action="store_true", help="also measure with the spin before issue 39")
    args = parser.parse_args()
    if not shutil.which("taskset"):
        raise SystemExit("taskset (util-linux) is needed to pin the busy process")
    switchyard = args.build / "bin" / "switchyard"
    ensure_model(args.suite)
    work = Path(tempfile.mkdtemp(prefix="contention-"))
    artifact = work / "resnet18.art"
    subprocess.run([str(switchyard), "compile", str(args.suite / "resnet18.onnx"), "-o", str(artifact), "--devices",
                    "cpu:0"], check=True, capture_output=True)
    x_path = args.suite / "resnet18.input.npy"

    spins = ("now", "old") if args.compare_old_spin else ("now",)
    cells = [(load, path, spin, threads) for load in ("idle", "core 0 busy") for path in ("cli", "python")
             for spin in spins for threads in (1, 2)]
    base_env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    results = {cell: [] for cell in cells}
    for round_index in range(args.rounds):
        for cell in cells:
            load, path, spin, threads = cell
            env = dict(base_env, GOMP_SPINCOUNT=OLD_SPIN[path]) if spin == "old" else base_env
            busy = BusyCore(0) if load != "idle" else None
            if busy:
                busy.__enter__()
            try:
                if path == "cli":
                    results[cell].append(cli_latency(switchyard, artifact, x_path, threads, args.repeat, env))
                else:
                    results[cell].append(python_latency(args.build, artifact, x_path, threads, args.seconds, env))
            finally:
                if busy:
                    busy.__exit__()
        print(f"round {round_index + 1} of {args.rounds} done (load average {os.getloadavg()[0]:.1f})",
              file=sys.stderr)

    print(f"ResNet-18 on cpu:0, {os.cpu_count()} cores; median of {args.rounds} rounds; load average now "
          f"{os.getloadavg()[0]:.1f} (other processes share this machine)")
    print(f"{'load':<12} {'path':<7} {'spin':<5} {'threads':>7} {'median ms':>10} {'p90 ms':>8} {'2t/1t (median)':>15}")
    for cell in cells:
        load, path, spin, threads = cell
        median = statistics.median(r["median"] for r in results[cell])
        p90 = statistics.median(r["p90"] for r in results[cell])
        ratio = ""
        if threads == 2:
            one = statistics.median(r["median"] for r in results[(load, path, spin, 1)])
            ratio = f"{median / one:.2f}"
        print(f"{load:<12} {path:<7} {spin:<5} {threads:>7} {median:>10.2f} {p90:>8.2f} {ratio:>15}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
