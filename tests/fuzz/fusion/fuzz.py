#!/usr/bin/env python3
"""The fusion fuzzer: random graphs around every anchor (graphs.py),
compiled into artifacts and compared with the reference interpreter.

    /usr/bin/python3 tests/fuzz/fusion/fuzz.py --graphs 300                 # graphs 0..299
    /usr/bin/python3 tests/fuzz/fusion/fuzz.py --minutes 30 --first 100000  # a long run
    /usr/bin/python3 tests/fuzz/fusion/fuzz.py --replay                      # the kept findings

Graphs are built several to a module (their inputs and outputs side by
side, so one C++ compile serves them all); a module that fails is built
again one graph at a time to find the graphs to blame. Even batches run on
cpu:0, odd ones split across cpu:0 and cpu:1 (inputs on cpu:0, outputs on
cpu:1), at one or two threads. Each graph ends as:

  pass     every output matches the interpreter's (comparison rules below)
  refused  the build or the run raised a sy.Error
  wrong    an output differs
  crash    the build or the run died, hung, or raised anything else

Outputs match when they have the same shape and dtype, NaN and each signed
infinity at the same places, and finite values within 1e-4 relative to the
output's largest finite magnitude plus 1e-3 relative per element plus 1e-43
plus the output's bound on denormal rounding (graphs.py's `floor`; integers
and booleans exactly). A wrong or crashing graph is written to
tests/fuzz/fusion/findings/ (with --keep) as its module's text and its
inputs, which --replay and the test suite run from then on.

Exits 1 when a graph is wrong or crashed. Batches run in child processes
(--jobs), so a crash is counted instead of ending the run.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "support"))
import array_compare  # noqa: E402
FINDINGS = HERE / "findings"
# Relative to the output's largest finite magnitude; relative to each element
# (a product's rounding, taken through tanh or a scale of 1e30, stays
# relative to that element, not to the output); and absolute, a few hundred
# denormal steps (sums of denormals round in the order they are added, which
# differs; flushing them to zero does not hide under this).
TOLERANCE = 1e-4
ELEMENT_TOLERANCE = 1e-3
DENORMAL_FLOOR = 1e-43
RESULT_PREFIX = "@@fusion-fuzz "


# ------------------------------------------------------------- comparison

def compare(actual, expected, floor=0.0):
    """None when `actual` matches `expected` under the rules above, else what
    differs; `floor` is the output's bound on rounding (graphs.py)."""
    return array_compare.compare(actual, expected, TOLERANCE, ELEMENT_TOLERANCE, DENORMAL_FLOOR + floor)


# ------------------------------------------------------------ one module

def first_line(e):
    lines = str(e).strip().splitlines()
    return lines[0][:300] if lines else type(e).__name__


def check_module(sy, mod, inputs, devices, threads, scratch, cache_dir, floors=None):
    """(status, detail) of building `mod`, running it on `inputs` and
    comparing with the interpreter (output k allowing floors[k] more)."""
    try:
        expected = sy.evaluate(mod, **inputs)
    except sy.Error as e:
        return "refused", "interpreter: " + first_line(e)
    try:
        output = os.path.join(scratch, "artifact")
        sy.build(mod, devices, output, cache_dir=cache_dir)
        actual = sy.runtime.load(output, threads=threads).run(**inputs)
    except sy.Error as e:
        return "refused", first_line(e)
    except Exception as e:  # noqa: BLE001 - anything not a sy.Error is a crash to report
        return "crash", f"{type(e).__name__}: {first_line(e)}"
    expected = list(expected) if isinstance(expected, tuple) else [expected]
    actual = list(actual) if isinstance(actual, tuple) else [actual]
    if len(actual) != len(expected):
        return "wrong", f"{len(actual)} outputs, expected {len(expected)}"
    for k, (a, e) in enumerate(zip(actual, expected)):
        diff = compare(a, e, floors[k] if floors else 0.0)
        if diff:
            return "wrong", f"output {k}: {diff}"
    return "pass", ""


def placed(sy, mod, split):
    """`mod` as built: on cpu:0, or with inputs on cpu:0 and outputs on cpu:1."""
    if not split:
        return mod, ["cpu:0"]

    class PinInputs(sy.ir.ExprMutator):
        def visit_var(self, var):
            return var.with_fields(virtual_device="cpu:0")

    main = PinInputs().visit(mod["main"]).with_fields(virtual_device="cpu:1")
    return sy.IRModule({"main": main}), ["cpu:0", "cpu:1"]


def check_batch(first, count, cache_dir):
    """[(seed, anchor, status, detail)] for graphs first .. first+count-1."""
    sys.path.insert(0, str(HERE))
    import numpy as np
    import graphs as graph_maker
    import switchyard as sy

    np.seterr(all="ignore")
    split = (first // max(count, 1)) % 2 == 1
    threads = 1 + (first // max(count, 1)) % 3 % 2
    made = []
    for seed in range(first, first + count):
        try:
            made.append(graph_maker.graph(seed))
        except Exception as e:  # noqa: BLE001 - a generator bug is reported, not fatal
            return [(seed, "", "crash", f"generator: {type(e).__name__}: {first_line(e)}")]

    def run(group):
        mod, devices = placed(sy, graph_maker.module_of(group), split)
        inputs = {k: v for g in group for k, v in g.inputs.items()}
        floors = [v.floor for g in group for v in g.outputs]
        with tempfile.TemporaryDirectory(prefix="sy-fusion-fuzz-") as scratch:
            return check_module(sy, mod, inputs, devices, threads, scratch, cache_dir, floors)

    status, detail = run(made)
    if status == "pass" or len(made) == 1:
        return [(g.seed, g.anchor, status, detail) for g in made]
    return [(g.seed, g.anchor) + run([g]) for g in made]


def worker_main(first, count, cache_dir):
    for seed, anchor, status, detail in check_batch(first, count, cache_dir):
        print(RESULT_PREFIX + json.dumps({"seed": seed, "anchor": anchor, "status": status, "detail": detail}),
              flush=True)


# ------------------------------------------------------------- findings

def keep_finding(seed):
    """Writes graph `seed` as findings/seed-N.sy and its inputs as .npz."""
    sys.path.insert(0, str(HERE))
    import numpy as np
    import graphs as graph_maker

    g = graph_maker.graph(seed)
    FINDINGS.mkdir(exist_ok=True)
    (FINDINGS / f"seed-{seed}.sy").write_text(graph_maker.module_of([g]).astext(show_weights=True))
    np.savez(FINDINGS / f"seed-{seed}.npz", **g.inputs)


def replay(path, cache_dir=""):
    """(status, detail) of the kept finding `path` (a .sy beside its .npz),
    on cpu:0 and split."""
    import numpy as np
    import switchyard as sy

    mod = sy.parse(pathlib.Path(path).read_text(), str(path))
    with np.load(pathlib.Path(path).with_suffix(".npz")) as data:
        inputs = {k: data[k] for k in data.files}
    for split in (False, True):
        built, devices = placed(sy, mod, split)
        with tempfile.TemporaryDirectory(prefix="sy-fusion-replay-") as scratch:
            status, detail = check_module(sy, built, inputs, devices, 2, scratch, cache_dir)
        if status != "pass":
            return status, ("split: " if split else "") + detail
    return "pass", ""


# ----------------------------------------------------------------- parent

def run_batch(first, count, cache_dir, timeout):
    """The batch's results, from a child process; a child that dies or hangs
    is a crash of each graph it had not reported."""
    env = dict(os.environ, SY_FUSION_CACHE=cache_dir)
    command = [sys.executable, __file__, "--worker", "--first", str(first), "--graphs", str(count)]
    try:
        proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
        out, why = proc.stdout, f"exited with status {proc.returncode}: {proc.stderr.strip()[-300:]}"
    except subprocess.TimeoutExpired as e:
        out, why = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), \
            f"timed out after {timeout} s"
    results = {r["seed"]: r for line in out.splitlines() if line.startswith(RESULT_PREFIX)
               for r in [json.loads(line[len(RESULT_PREFIX):])]}
    for seed in range(first, first + count):
        results.setdefault(seed, {"seed": seed, "anchor": "", "status": "crash", "detail": why})
    return [results[s] for s in range(first, first + count)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--first", type=int, default=0, help="the first graph's number (default 0)")
    parser.add_argument("--graphs", type=int, default=300, help="how many graphs (default 300)")
    parser.add_argument("--minutes", type=float, help="run until this many minutes have passed instead")
    parser.add_argument("--per-build", type=int, default=8, help="graphs built together (default 8)")
    parser.add_argument("--jobs", type=int, default=2, help="child processes at once (default 2)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per batch (default 300)")
    parser.add_argument("--keep", action="store_true", help="write wrong and crashing graphs to findings/")
    parser.add_argument("--replay", action="store_true", help="run the kept findings instead")
    parser.add_argument("--json", metavar="FILE", help="write every result as JSON")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    cache_dir = os.environ.get("SY_FUSION_CACHE", "")
    if args.worker:
        worker_main(args.first, args.graphs, cache_dir)
        return 0
    if args.replay:
        failed = 0
        for path in sorted(FINDINGS.glob("*.sy")):
            status, detail = replay(path)
            failed += status in ("wrong", "crash")
            print(f"{path.name}: {status} {detail}")
        return 1 if failed else 0

    from concurrent.futures import ThreadPoolExecutor

    start = time.monotonic()
    deadline = start + args.minutes * 60 if args.minutes else None
    results = []
    with tempfile.TemporaryDirectory(prefix="sy-fusion-cache-") as cache, \
            ThreadPoolExecutor(max_workers=args.jobs) as pool:
        next_first = args.first
        last = args.first + args.graphs
        running = set()
        while True:
            while len(running) < args.jobs and (next_first < last if deadline is None
                                                else time.monotonic() < deadline):
                count = args.per_build if deadline else min(args.per_build, last - next_first)
                running.add(pool.submit(run_batch, next_first, count, cache, args.timeout))
                next_first += count
            if not running:
                break
            done = next(iter(f for f in running if f.done()), None)
            if done is None:
                time.sleep(0.05)
                continue
            running.remove(done)
            for r in done.result():
                results.append(r)
                if r["status"] in ("wrong", "crash"):
                    print(f"graph {r['seed']} ({r['anchor']}): {r['status']}: {r['detail']}", flush=True)
                    if args.keep:
                        keep_finding(r["seed"])
    seconds = time.monotonic() - start
    counts = {s: sum(r["status"] == s for r in results) for s in ("pass", "refused", "wrong", "crash")}
    print(f"fusion fuzz: {len(results)} graphs in {seconds:.0f} s: " + "  ".join(f"{k} {v}" for k, v in counts.items()))
    refusals = sorted({r["detail"] for r in results if r["status"] == "refused"})
    for detail in refusals[:20]:
        print(f"  refused: {detail}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"seconds": round(seconds), "counts": counts,
                                                       "results": results}, indent=1) + "\n")
    return 1 if counts["wrong"] + counts["crash"] else 0


if __name__ == "__main__":
    sys.exit(main())
