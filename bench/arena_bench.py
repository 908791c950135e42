"""Arena sizes against the memory planner's lower bound on the model suite.

Compiles each suite model (tests/models) for cpu:0, and ResNet-18 split across
cpu:0 and cpu:1 as scripts/run-example.sh does, then prints per device the
planned arena, the planner's lower bound (the most bytes live at one step)
and their ratio, read from each artifact's manifest. The aim is a ratio of at
most 1.1 on every row. A warm kernel cache makes the whole run a few seconds.

    /usr/bin/python3 bench/arena_bench.py --build build [--models resnet50,encoder]
"""
import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "models"))
from export_models import default_cache_dir, model_files  # noqa: E402
import model_zoo  # noqa: E402

# (row name, suite model, devices, extra compile arguments)
SPLIT = ("resnet18 split", "resnet18", "cpu:0,cpu:1",
         ["--place", "node:/conv1/*=cpu:0", "--place", "node:/layer4/*=cpu:1"])
PLAN_TIME = re.compile(r"^memory-plan\s+([\d.]+)$", re.M)


def configurations(names):
    rows = [(name, name, "cpu:0", []) for name in names]
    if SPLIT[1] in names:
        rows.append(SPLIT)
    return rows


def measure(switchyard, suite, row, work):
    label, model, devices, extra = row
    artifact = work / label.replace(" ", "_")
    command = [str(switchyard), "compile", str(suite / f"{model}.onnx"), "-o", str(artifact), "--devices", devices,
               "--time", *extra]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{label}: compile failed:\n{done.stderr or done.stdout}")
    plan_ms = PLAN_TIME.search(done.stdout + done.stderr)
    manifest = json.loads((artifact / "manifest.json").read_text())
    device_names = devices.split(",")
    out = []
    for arena in manifest["arenas"]:
        out.append({"model": label, "device": device_names[arena["device"]], "scope": arena["scope"],
                    "bytes": arena["bytes"], "lower_bound_bytes": arena["lower_bound_bytes"],
                    "plan_ms": float(plan_ms.group(1)) if plan_ms else None})
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build", help="the build folder (holds bin/switchyard)")
    parser.add_argument("--models", default=",".join(model_zoo.MODELS), help="comma-separated suite models")
    parser.add_argument("--suite", default=None, help="folder of the exported suite (default: the cache)")
    parser.add_argument("--json", default=None, help="also write the rows here as JSON")
    args = parser.parse_args()
    names = [n for n in args.models.split(",") if n]
    suite = Path(args.suite) if args.suite else Path(default_cache_dir())
    missing = [n for n in names if not all(p.exists() for p in model_files(suite, n))]
    if missing:
        subprocess.run([sys.executable, str(REPO / "tests/models/export_models.py"), "--out", str(suite),
                        "--models", ",".join(missing)], check=True, stdout=sys.stderr)
    switchyard = Path(args.build).resolve() / "bin" / "switchyard"

    rows = []
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as work:
        for configuration in configurations(names):
            rows += measure(switchyard, suite, configuration, Path(work))

    mib = 1 << 20
    print("| model | device | arena MiB | lower bound MiB | ratio | plan ms |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        ratio = r["bytes"] / r["lower_bound_bytes"] if r["lower_bound_bytes"] else 1.0
        scope = "" if r["scope"] == "global" else f" ({r['scope']})"
        plan = f"{r['plan_ms']:.2f}" if r["plan_ms"] is not None else "-"
        print(f"| {r['model']} | {r['device']}{scope} | {r['bytes'] / mib:.3f} | {r['lower_bound_bytes'] / mib:.3f} "
              f"| {ratio:.3f}x | {plan} |")
    worst = max((r["bytes"] / r["lower_bound_bytes"] for r in rows if r["lower_bound_bytes"]), default=1.0)
    print(f"\nworst ratio {worst:.3f}x (aim: at most 1.1x)")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
