#!/usr/bin/env python3
"""Every zoo model compiled for one device and split across two, run, and
compared with PyTorch's stored output (the error relative to the output's
largest magnitude; 1e-4 is the goal). Prints a line per model and path and
exits 1 if any is off or fails.

    /usr/bin/python3 bench/zoo/check_accuracy.py --build build [--models densenet121,gpt2]

The zoo must be exported first (tests/models/export_models.py --suite zoo,
which run_peers.py also does). A model the importer refuses is a failure
line with the refusal's first line.

With --opsets, the exports of export_models.py --opsets (a folder per
opset, ZOO/opsetN) are checked instead, and a table of model x opset is
printed (and written to --table as Markdown): `ok` (both paths within the
tolerance), `exporter refused` (PyTorch's exporter could not write the
model at that opset: its NAME.refused.txt), `exporter inexact` (compiled
and run, off PyTorch's output where the exporter warned that the file
differs from PyTorch: its NAME.inexact.txt), or Switchyard's error.

    /usr/bin/python3 bench/zoo/check_accuracy.py --build build --models torchvision --opsets 9,11,12,13,15,17
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "models"))
import suites  # noqa: E402

TOLERANCE = 1e-4


def check(switchyard, zoo, name, devices, scratch, place=()):
    """(ok, line) for one model on one device list; `place`: placement rules
    for a compile over several devices."""
    meta = json.loads((zoo / f"{name}.json").read_text())
    expected = np.load(zoo / f"{name}.expected.npy")
    artifact = scratch / f"{name}.{devices.count(',') + 1}.art"
    started = time.perf_counter()
    built = subprocess.run([switchyard, "compile", str(zoo / f"{name}.onnx"), "-o", str(artifact),
                            "--devices", devices, *[f"--place={r}" for r in (place if "," in devices else ())]],
                           capture_output=True, text=True)
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


DEVICE_LISTS = ("cpu:0", "cpu:0,cpu:1")


def check_opset_folder(switchyard, folder, name, scratch, device_lists):
    """(status, cell) of one model at one opset: status is "ok", "refused"
    (by the exporter), "inexact" (the exporter's file, warned of, is off),
    "missing" (not exported) or "error" (Switchyard's);
    each path's line is printed."""
    refusal = folder / f"{name}.refused.txt"
    if refusal.exists():
        return "refused", "exporter refused: " + refusal.read_text().strip()[:100]
    if not (folder / f"{name}.json").exists():
        return "missing", "not exported"
    errors = []
    for devices in device_lists:
        ok, line = check(switchyard, folder, name, devices, scratch)
        print(f"{name:32} {folder.name:8} {devices:12} {'ok ' if ok else 'OFF'} {line}", flush=True)
        if not ok:
            errors.append(f"{devices}: {line}")
    if not errors:
        return "ok", "ok"
    if (folder / f"{name}.inexact.txt").exists() and all("error" in e for e in errors):
        # Compiled and run, but the file itself differs from PyTorch: the
        # exporter warned so (bilinear resizing before opset 11).
        return "inexact", "exporter inexact: " + errors[0].split(": ", 1)[1].split(", ")[-1].replace(
            " of the largest magnitude", "")
    return "error", "ours: " + "; ".join(errors)[:160]


def opset_table(names, opsets, cells):
    """The Markdown table of model x opset."""
    lines = ["| model | " + " | ".join(str(o) for o in opsets) + " |", "|---|" + "---|" * len(opsets)]
    for name in names:
        lines.append(f"| {name} | " + " | ".join(cells[name, o][1].replace("|", "/") for o in opsets) + " |")
    return "\n".join(lines) + "\n"


def check_opsets(args, switchyard, opsets):
    folders = {o: args.zoo / f"opset{o}" for o in opsets}
    if args.models:
        names = suites.expand_names(args.models, suites.models_of("zoo"))
    else:
        found = {p.name.split(".")[0] for f in folders.values() for p in f.glob("*.json")}
        found |= {p.name.split(".")[0] for f in folders.values() for p in f.glob("*.refused.txt")}
        names = sorted(found)
    if not names:
        sys.exit(f"no models in {args.zoo}/opsetN: export them with tests/models/export_models.py --suite zoo "
                 f"--opsets {','.join(map(str, opsets))}")
    cells = {}
    with tempfile.TemporaryDirectory() as scratch:
        for opset in opsets:
            for name in names:
                cells[name, opset] = check_opset_folder(switchyard, folders[opset], name, pathlib.Path(scratch),
                                                      args.devices)
                if cells[name, opset][0] != "ok":
                    print(f"{name:32} {folders[opset].name:8} {cells[name, opset][1]}", flush=True)
    table = opset_table(names, opsets, cells)
    print(table)
    if args.table:
        args.table.write_text(table)
    counts = {s: sum(c[0] == s for c in cells.values()) for s in ("ok", "refused", "inexact", "missing", "error")}
    print(f"{len(names)} models x {len(opsets)} opsets: {counts['ok']} ok, {counts['refused']} refused by the "
          f"exporter, {counts['inexact']} inexact exports, {counts['missing']} not exported, "
          f"{counts['error']} Switchyard's errors")
    return 1 if counts["error"] or counts["missing"] else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", type=pathlib.Path, default=pathlib.Path("build"))
    parser.add_argument("--zoo", type=pathlib.Path, default=pathlib.Path.home() / ".cache/switchyard/zoo")
    parser.add_argument("--models", help="comma-separated names or groups (default: every exported one)")
    parser.add_argument("--opsets", help="comma-separated opsets: check the exports in ZOO/opsetN instead")
    parser.add_argument("--table", type=pathlib.Path, help="with --opsets: write the model x opset table here")
    parser.add_argument("--devices", action="append", help="a device list to compile for, repeatable "
                        f"(default: {' and '.join(DEVICE_LISTS)})")
    parser.add_argument("--place", action="append", default=[],
                        help="a placement rule for the builds over several devices, repeatable: without one a "
                        "split build may put every node on one device (fewest bytes copied); e.g. "
                        "--place op:add=cpu:1 --place op:concatenate=cpu:1 makes values cross at every join")
    args = parser.parse_args()
    args.devices = args.devices or list(DEVICE_LISTS)
    switchyard = str(args.build / "bin/switchyard")
    if args.opsets:
        try:
            opsets = [int(o) for o in args.opsets.split(",") if o]
        except ValueError:
            parser.error(f"--opsets takes comma-separated integers, got {args.opsets!r}")
        try:
            sys.exit(check_opsets(args, switchyard, opsets))
        except ValueError as e:
            parser.error(str(e))
    try:
        names = (suites.expand_names(args.models, suites.models_of("zoo")) if args.models
                 else sorted(p.stem for p in args.zoo.glob("*.onnx")))
    except ValueError as e:
        parser.error(str(e))
    if not names:
        sys.exit(f"no models in {args.zoo}: export them with tests/models/export_models.py --suite zoo")
    failures = 0
    with tempfile.TemporaryDirectory() as scratch:
        for name in names:
            for devices in args.devices:
                ok, line = check(switchyard, args.zoo, name, devices, pathlib.Path(scratch), args.place)
                failures += not ok
                print(f"{name:32} {devices:12} {'ok ' if ok else 'OFF'} {line}", flush=True)
    print(f"{len(names)} models, {failures} off or failing")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
