#!/usr/bin/env python3
"""ONNX's own backend test cases as the conformance suite, through the
interpreter and through compiled artifacts.

Every case folder of Debian's libonnx-testdata (the node, pytorch-converted,
pytorch-operator and simple sets under /usr/share/libonnx-testdata/data: a
model.onnx and test_data_set_*/input_N.pb, output_N.pb) is imported with
sy.frontend.from_onnx and run on each path:

  interp    sy.evaluate, the reference interpreter: the oracle the compiled
            paths are held to
  compiled  sy.build for cpu:0, loaded and run
  split     sy.build for cpu:0 and cpu:1 with the inputs pinned to cpu:0 and
            the outputs to cpu:1, so every case crosses devices

in child processes with a per-case timeout, so that a crash or a hang is
counted instead of ending the run. Each case on each path is one of:

  pass     every output of every data set matches (shape, dtype, values:
           floats within 1e-4 relative to the largest expected magnitude plus
           1e-4 relative per element, NaN where NaN is expected; ints and
           bools exact)
  refused  import, build or the run raised a sy.Error (the reason is the
           first line of its message)
  wrong    it ran, and an output does not match
  crash    the child died or hung, or raised an exception that is not a
           sy.Error

Prints the four counts per path, the refusal reasons grouped, and the wrong
and crash cases; exits 1 when any case is wrong or crashed on any path.
Builds share one kernel cache in a temporary folder, so a kernel two cases
share is compiled once.

    /usr/bin/python3 tests/conformance/run_onnx_suite.py [--filter 'test_conv*'] [--paths interp,compiled] [--jobs 2] [--json report.json]

The package is imported from $SY_BUILD_DIR/python, else from PYTHONPATH,
else from build/python (or --build-dir).
"""
import argparse
import collections
import fnmatch
import glob
import json
import os
import pathlib
import queue
import re
import selectors
import subprocess
import sys
import tempfile
import threading
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "support"))
from array_compare import compare  # noqa: E402  (floats within 1e-4, as the docstring says)
DATA_ROOT = "/usr/share/libonnx-testdata/data"
DEFAULT_SETS = ("node", "pytorch-converted", "pytorch-operator", "simple")
PATHS = ("interp", "compiled", "split")
RESULT_PREFIX = "@@sy-conformance "


# ---------------------------------------------------------------- the child

def load_case_data(case_dir, model):
    """[(inputs by name, expected outputs)] per data set, or raise."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    initializers = {t.name for t in model.graph.initializer}
    graph_inputs = [i for i in model.graph.input if i.name not in initializers]
    sets = []
    for set_dir in sorted(glob.glob(os.path.join(case_dir, "test_data_set_*"))):
        inputs = {}
        for k, info in enumerate(graph_inputs):
            path = os.path.join(set_dir, f"input_{k}.pb")
            if not os.path.exists(path):
                continue  # an optional input left out
            if not info.type.HasField("tensor_type"):
                raise NonTensorData(f"input '{info.name}' is not a tensor")
            inputs[info.name] = tensor_array(onnx.load_tensor(path), info)
        expected = []
        for k, info in enumerate(model.graph.output):
            if not info.type.HasField("tensor_type"):
                raise NonTensorData(f"output '{info.name}' is not a tensor")
            expected.append(tensor_array(onnx.load_tensor(os.path.join(set_dir, f"output_{k}.pb")), info))
        fix = EXPECTED_DATA_FIXES.get(os.path.basename(os.path.normpath(case_dir)))
        if fix:
            expected = fix[1](inputs, expected)
        sets.append((inputs, expected))
    return sets


def tensor_array(tensor, info):
    """The tensor as NumPy holds it. Where the graph declares bfloat16, the
    data holds its bits as uint16 (NumPy has no bfloat16): widened to
    float32, the form sy.evaluate returns a bfloat16 tensor in."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    array = np.asarray(numpy_helper.to_array(tensor))
    if info.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16 and array.dtype == np.uint16:
        array = (array.astype(np.uint32) << 16).view(np.float32)
    return array


class NonTensorData(Exception):
    pass


def bfloat16_nearest_even(x):
    """float32 -> bfloat16 rounded to nearest even, widened back to float32."""
    import numpy as np

    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), x, rounded)


# Cases whose stored expected data contradicts the ONNX specification as it
# stands: name -> (why, a function of (inputs, expected) giving the right
# expected outputs). The case is still checked, against the corrected data.
EXPECTED_DATA_FIXES = {
    "test_cast_FLOAT_to_BFLOAT16": (
        "the stored output truncates float32 to bfloat16 (onnx < 1.14 made it so); Cast rounds to nearest even",
        lambda inputs, expected: [bfloat16_nearest_even(inputs["input"])]),
}


def first_line(text):
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""


def pinned_across_devices(mod, sy):
    """`mod` with @main's inputs on cpu:0 and its result on cpu:1."""

    class PinInputs(sy.ir.ExprMutator):
        def visit_var(self, var):
            return var.with_fields(virtual_device="cpu:0")

    main = PinInputs().visit(mod["main"]).with_fields(virtual_device="cpu:1")
    return sy.IRModule({"main": main})


class Runner:
    """Runs one imported model on one path: run(inputs) -> outputs."""

    def __init__(self, sy, mod, path, scratch, cache_dir):
        self.sy = sy
        self.mod = mod
        self.artifact = None
        if path == "interp":
            return
        devices = ["cpu:0"] if path == "compiled" else ["cpu:0", "cpu:1"]
        built = mod if path == "compiled" else pinned_across_devices(mod, sy)
        output = os.path.join(scratch, "artifact")
        sy.build(built, devices, output, cache_dir=cache_dir)
        self.artifact = sy.runtime.load(output, threads=1)

    def run(self, inputs):
        if self.artifact is None:
            return self.sy.evaluate(self.mod, **inputs)
        return self.artifact.run(**inputs)


def run_case(case_dir, path, sy, cache_dir):
    """The result of one case on one path as a dict (status, reason, stage, detail)."""
    import onnx

    model_path = os.path.join(case_dir, "model.onnx")
    try:
        mod = sy.frontend.from_onnx(model_path)
    except sy.Error as e:
        return {"status": "refused", "stage": "import", "message": str(e.message)}
    except Exception as e:  # noqa: BLE001 - anything else is a crash to report
        return {"status": "crash", "stage": "import", "detail": f"{type(e).__name__}: {first_line(e)}"}
    try:
        data = load_case_data(case_dir, onnx.load(model_path))
    except NonTensorData as e:
        return {"status": "wrong", "stage": "data", "detail": f"the importer accepted a model whose {e}"}
    if not data:
        return {"status": "crash", "stage": "data", "detail": "no test_data_set_* folder"}
    with tempfile.TemporaryDirectory(prefix="sy-conformance-") as scratch:
        try:
            runner = Runner(sy, mod, path, scratch, cache_dir)
        except sy.Error as e:
            return {"status": "refused", "stage": "build", "message": str(e.message)}
        except Exception as e:  # noqa: BLE001
            return {"status": "crash", "stage": "build", "detail": f"{type(e).__name__}: {first_line(e)}"}
        for k, (inputs, expected) in enumerate(data):
            try:
                result = runner.run(inputs)
            except sy.Error as e:
                return {"status": "refused", "stage": "run", "message": str(e.message)}
            except Exception as e:  # noqa: BLE001
                return {"status": "crash", "stage": "run", "detail": f"{type(e).__name__}: {first_line(e)}"}
            outputs = list(result) if isinstance(result, tuple) else [result]
            if len(outputs) != len(expected):
                return {"status": "wrong", "stage": "compare",
                        "detail": f"{len(outputs)} outputs, expected {len(expected)}"}
            for j, (a, e) in enumerate(zip(outputs, expected)):
                if isinstance(a, tuple):
                    return {"status": "wrong", "stage": "compare", "detail": f"output {j} is a tuple"}
                diff = compare(a, e)
                if diff:
                    return {"status": "wrong", "stage": "compare", "detail": f"data set {k}, output {j}: {diff}"}
    fix = EXPECTED_DATA_FIXES.get(os.path.basename(os.path.normpath(case_dir)))
    return {"status": "pass", "note": "expected data corrected: " + fix[0]} if fix else {"status": "pass"}


def worker_main():
    """Reads "PATH<tab>case folder" lines from stdin; writes one result line each."""
    import numpy as np
    import switchyard as sy

    np.seterr(all="ignore")
    out = sys.stdout
    cache_dir = os.environ.get("SY_CONFORMANCE_CACHE", "")
    for line in sys.stdin:
        if not line.strip():
            continue
        path, case_dir = line.rstrip("\n").split("\t", 1)
        start = time.monotonic()
        try:
            result = run_case(case_dir, path, sy, cache_dir)
        except Exception as e:  # noqa: BLE001 - a harness failure is still a result
            result = {"status": "crash", "stage": "harness", "detail": f"{type(e).__name__}: {first_line(e)}"}
        result["seconds"] = round(time.monotonic() - start, 3)
        out.write(RESULT_PREFIX + json.dumps(result) + "\n")
        out.flush()


# ---------------------------------------------------------------- the parent

class Child:
    """One worker process; `run` sends it a case and waits for its result."""

    def __init__(self, env):
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker"], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.proc.stdout, selectors.EVENT_READ)
        self.buffer = b""

    def run(self, job, timeout):
        """The child's result dict for a (path, case folder) job, or None
        with a reason when it died or hung."""
        try:
            self.proc.stdin.write(("\t".join(job) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            return None, self.death()
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                text = line.decode(errors="replace")
                if text.startswith(RESULT_PREFIX):
                    return json.loads(text[len(RESULT_PREFIX):]), None
            left = deadline - time.monotonic()
            if left <= 0:
                self.close()
                return None, f"timed out after {timeout:g} s"
            if not self.selector.select(left):
                continue
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                return None, self.death()
            self.buffer += chunk

    def death(self):
        code = self.proc.wait()
        self.stderr.seek(0)
        tail = [l for l in self.stderr.read().decode(errors="replace").strip().splitlines() if l.strip()]
        how = f"killed by signal {-code}" if code < 0 else f"exited with status {code}"
        return how + (f" ({tail[-1].strip()[:200]})" if tail else "")

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.selector.close()
        self.stderr.close()


def case_name(case_dir):
    """"set/case", e.g. "node/test_add"."""
    return "/".join(pathlib.Path(case_dir).parts[-2:])


def run_cases(work_items, jobs, timeout, env, progress):
    """{(path, case name): result} for (path, case folder) items, running
    `jobs` children over a shared queue."""
    todo = queue.Queue()
    for item in work_items:
        todo.put(item)
    results = {}
    lock = threading.Lock()

    def alone(job):
        child = Child(env)
        try:
            return child.run(job, timeout)
        finally:
            child.close()

    def work():
        child = None
        while True:
            try:
                job = todo.get_nowait()
            except queue.Empty:
                break
            child = child or Child(env)
            result, death = child.run(job, timeout)
            if result is None:
                child.close()
                child = None
                # Confirm in a fresh child of its own: a crash caused by an
                # earlier case in the batch is reported as such.
                result, death_alone = alone(job)
                if result is None:
                    result = {"status": "crash", "stage": "child", "detail": death_alone}
                else:
                    result["note"] = f"its batch child {death}; it ran alone"
            with lock:
                results[(job[0], case_name(job[1]))] = result
                progress(len(results))
        if child:
            child.close()

    threads = [threading.Thread(target=work) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def refusal_reason(message):
    """The first line of a refusal, without the model's path, made generic
    enough to group: node names and numbers replaced, the operator kept."""
    lines = message.strip().splitlines()
    line = lines[0] if lines else ""
    line = re.sub(r"^\S*model\.onnx: ", "", line)
    if re.match(r"\d+ nodes? with unsupported operators:", line):
        ops = sorted({m.group(1) for l in lines[1:] for m in [re.search(r"\((\w+)\)(?: of domain|$)", l)] if m})
        return "unsupported operator: " + ", ".join(ops)
    line = re.sub(r"^node (?:'[^']*'|\(unnamed\)) \((\w+)\): ", r"\1: ", line)
    line = re.sub(r"'[^']*'", "'…'", line)
    return line


def summarize(results):
    """{path: Counter of statuses} over (path, case) results."""
    counts = collections.defaultdict(collections.Counter)
    for (path, _), r in results.items():
        counts[path][r["status"]] += 1
    for path in counts:
        for status in ("pass", "refused", "wrong", "crash"):
            counts[path].setdefault(status, 0)
    return counts


def short(name):
    case = name.split("/")[-1]
    return case[len("test_"):] if case.startswith("test_") else case


def print_report(results, seconds, jobs, paths):
    counts = summarize(results)
    cases = {name for _, name in results}
    print(f"ONNX backend tests: {len(cases)} cases on {len(paths)} paths in {seconds:.1f} s ({jobs} jobs)")
    for path in paths:
        print(f"  {path:9s}" + "  ".join(f"{s} {counts[path][s]}" for s in ("pass", "refused", "wrong", "crash")))
    for path in paths:
        reasons = collections.defaultdict(list)
        for (p, name), r in sorted(results.items()):
            # An import refusal is the same on every path: shown once, under the first.
            if p == path and r["status"] == "refused" and (path == paths[0] or r["stage"] != "import"):
                reasons[f"[{r['stage']}] {refusal_reason(r['message'])}"].append(name)
        if reasons:
            print(f"\nrefusals on {path}, by reason:")
            for reason, names in sorted(reasons.items(), key=lambda kv: (-len(kv[1]), kv[0])):
                shown = ", ".join(short(n) for n in names[:3])
                more = f", +{len(names) - 3}" if len(names) > 3 else ""
                print(f"  {len(names):4d}  {reason[:110]}\n        ({shown}{more})")
    for status in ("wrong", "crash"):
        bad = [(key, r) for key, r in sorted(results.items()) if r["status"] == status]
        if bad:
            print(f"\n{status}:")
            for (path, name), r in bad:
                print(f"  {name} [{path}]: [{r.get('stage')}] {r.get('detail')}")
    notes = [(key, r["note"]) for key, r in sorted(results.items()) if r.get("note")]
    if notes:
        print("\nnotes:")
        for (path, name), note in notes:
            print(f"  {name} [{path}]: {note}")


def child_env(build_dir):
    env = dict(os.environ)
    if build_dir:
        python_dir = str(pathlib.Path(build_dir).resolve() / "python")
    elif "SY_BUILD_DIR" in env:
        python_dir = str(pathlib.Path(env["SY_BUILD_DIR"]).resolve() / "python")
    elif env.get("PYTHONPATH"):
        return env
    else:
        python_dir = str(REPO / "build" / "python")
    env["PYTHONPATH"] = python_dir + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="example: run_onnx_suite.py --filter 'test_conv*' --json report.json")
    parser.add_argument("--data", action="append", metavar="DIR",
                        help="a folder of case folders (repeatable; default: the "
                             + ", ".join(DEFAULT_SETS) + " sets under " + DATA_ROOT + ")")
    parser.add_argument("--filter", action="append", metavar="GLOB",
                        help="run only cases whose folder name matches (repeatable)")
    parser.add_argument("--paths", default=",".join(PATHS),
                        help="comma-separated paths to run each case on (default: %(default)s)")
    parser.add_argument("--jobs", type=int, default=2, help="child processes at once (default: %(default)s)")
    parser.add_argument("--timeout", type=float, default=60, help="seconds per case and path (default: %(default)s)")
    parser.add_argument("--json", metavar="FILE", help="write the full report as JSON")
    parser.add_argument("--build-dir", help="the build folder whose python/ holds the package")
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker_main()
        return 0

    paths = [p for p in args.paths.split(",") if p]
    unknown = [p for p in paths if p not in PATHS]
    if unknown or not paths:
        print(f"run_onnx_suite: unknown path {unknown[0] if unknown else '(none)'} (paths: {', '.join(PATHS)})",
              file=sys.stderr)
        return 2
    folders = args.data or [os.path.join(DATA_ROOT, s) for s in DEFAULT_SETS]
    missing = [d for d in folders if not os.path.isdir(d)]
    if missing:
        print(f"run_onnx_suite: no test data at {missing[0]} (install Debian's libonnx-testdata)", file=sys.stderr)
        return 2
    cases = sorted(d for folder in folders for d in glob.glob(os.path.join(folder, "*"))
                   if os.path.isfile(os.path.join(d, "model.onnx")))
    if args.filter:
        cases = [d for d in cases if any(fnmatch.fnmatchcase(os.path.basename(d), g) for g in args.filter)]
    if not cases:
        print("run_onnx_suite: no case matches", file=sys.stderr)
        return 2
    work_items = [(path, case) for case in cases for path in paths]

    show = sys.stderr.isatty() and not args.quiet

    def progress(done):
        if show:
            print(f"\r{done}/{len(work_items)}", end="", file=sys.stderr, flush=True)

    start = time.monotonic()
    env = child_env(args.build_dir)
    with tempfile.TemporaryDirectory(prefix="sy-conformance-cache-") as cache:
        env["SY_CONFORMANCE_CACHE"] = cache
        results = run_cases(work_items, args.jobs, args.timeout, env, progress)
    seconds = time.monotonic() - start
    if show:
        print(file=sys.stderr)
    print_report(results, seconds, args.jobs, paths)
    counts = summarize(results)
    if args.json:
        by_case = collections.defaultdict(dict)
        for (path, name), r in sorted(results.items()):
            by_case[name][path] = dict(r, reason=refusal_reason(r["message"])) if r["status"] == "refused" else r
        report = {
            "data": folders,
            "paths": paths,
            "seconds": round(seconds, 1),
            "jobs": args.jobs,
            "counts": {path: dict(counts[path]) for path in paths},
            "cases": dict(sorted(by_case.items())),
        }
        pathlib.Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 1 if any(counts[p]["wrong"] + counts[p]["crash"] > 0 for p in paths) else 0


if __name__ == "__main__":
    sys.exit(main())
