"""Exports a model set (suites.py: the suite, model_zoo.py, or the zoo,
zoo_models.py) to ONNX with its input and PyTorch's output.

For each model NAME it writes into the set's cache folder NAME.onnx (opset
13 unless the set's OPSETS says otherwise, constants folded), NAME.input.npy,
NAME.expected.npy (PyTorch's output on that input) and NAME.json (the ONNX
input and output names and shapes). Models already there are skipped
unless --force.

With --opsets, each model is exported at each of those opsets instead, into
a folder per opset (DIR/opset9, DIR/opset11, ...). Where PyTorch's exporter
itself refuses a model at an opset, NAME.refused.txt there holds its
message (bench/zoo/check_accuracy.py reports it as the exporter's refusal).
--models also takes a group the set names (the zoo's `torchvision`).

    /usr/bin/python3 tests/models/export_models.py [--suite zoo] [--out DIR] [--models mlp,resnet18] [--force]
    /usr/bin/python3 tests/models/export_models.py --suite zoo --models torchvision --opsets 9,11,12,13,15,17
"""
import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import onnx
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import suites  # noqa: E402
from suites import default_cache_dir  # noqa: E402,F401  (run_peers.py and tests import it from here)

OPSET = 13


def model_files(out, name):
    return [out / f"{name}{suffix}" for suffix in (".onnx", ".input.npy", ".expected.npy", ".json")]


def refusal_file(out, name):
    """Where the exporter's refusal of `name` is kept (--opsets)."""
    return out / f"{name}.refused.txt"


def inexact_file(out, name):
    """Where the exporter's own warning that the file may not compute what
    PyTorch does is kept (Upsample before opset 11 has no half-pixel
    coordinates for align_corners=False)."""
    return out / f"{name}.inexact.txt"


# The exporter's warning that an operator it wrote differs from PyTorch's.
INEXACT_WARNING = "might cause results to not match"


def opset_dir(out, opset):
    """The folder of a set's exports at one opset (--opsets)."""
    return out / f"opset{opset}"


class ExporterRefusal(Exception):
    """PyTorch's exporter (or ONNX's checker on what it wrote) refused the
    model at this opset: a limit of the exporter, not of an importer."""


def _value_info(value):
    return value.name, [d.dim_value for d in value.type.tensor_type.shape.dim]


def export_model(name, out, models=None, opset=None):
    """Exports one model of the module `models` (default: the suite's) at
    `opset` (default: the set's for it); returns its description (what
    NAME.json holds). Raises ExporterRefusal when the exporter refuses it."""
    models = models or suites.models_of("suite")
    opset = opset or getattr(models, "OPSETS", {}).get(name, OPSET)
    model = models.build_model(name)
    x = models.make_input(name)
    with torch.no_grad():
        expected = model(torch.from_numpy(x)).numpy()

    # Written under temporary names and renamed at the end, with NAME.json
    # last: an interrupted export never looks present to the next run.
    onnx_path, input_path, expected_path, json_path = model_files(out, name)
    partial = out / f"{name}.partial.onnx"
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            torch.onnx.export(model, (torch.from_numpy(x),), str(partial), opset_version=opset,
                              do_constant_folding=True, input_names=["input"], output_names=["output"])
        graph = onnx.load(str(partial))
        onnx.checker.check_model(graph)
    except Exception as e:
        partial.unlink(missing_ok=True)
        raise ExporterRefusal(f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}") from e
    # The names and shapes are read back from the file, not restated, so
    # they are what an importer will see.
    (input_name, input_shape), = [_value_info(v) for v in graph.graph.input]
    (output_name, output_shape), = [_value_info(v) for v in graph.graph.output]
    # An output dimension the export leaves symbolic (0 here: Swin's, from
    # its shape arithmetic) is whatever the input's shapes make it.
    fixed = all(d in (0, e) for d, e in zip(output_shape, expected.shape)) and len(output_shape) == expected.ndim
    if list(x.shape) != input_shape or not fixed:
        raise RuntimeError(f"exported shapes {input_shape} -> {output_shape} differ from PyTorch's "
                           f"{list(x.shape)} -> {list(expected.shape)}")
    output_shape = list(expected.shape)
    description = {
        "model": name,
        "input": input_name,
        "input_shape": input_shape,
        "output": output_name,
        "output_shape": output_shape,
        "opset": opset,
        "torch": torch.__version__,
    }
    inexact = sorted({str(w.message).splitlines()[0] for w in caught if INEXACT_WARNING in str(w.message)})
    if inexact:
        inexact_file(out, name).write_text("\n".join(inexact) + "\n")
        description["exporter_warning"] = inexact
    else:
        inexact_file(out, name).unlink(missing_ok=True)
    os.replace(partial, onnx_path)
    for path, array in ((input_path, x), (expected_path, expected)):
        np.save(str(path) + ".partial.npy", array)
        os.replace(str(path) + ".partial.npy", path)
    json_path.with_suffix(".json.partial").write_text(json.dumps(description, indent=2) + "\n")
    os.replace(json_path.with_suffix(".json.partial"), json_path)
    return description


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", choices=list(suites.MODULES), default="suite",
                        help="the model set (default: %(default)s)")
    parser.add_argument("--out", type=Path, help="cache folder (default: ~/.cache/switchyard/SUITE)")
    parser.add_argument("--models", help="comma-separated names or groups (default: all of the set's)")
    parser.add_argument("--opsets", help="comma-separated opsets, each exported into its own folder OUT/opsetN "
                                         "(default: the set's opset, into OUT)")
    parser.add_argument("--force", action="store_true", help="export again even if present")
    args = parser.parse_args()

    models = suites.models_of(args.suite)
    args.out = args.out or default_cache_dir(args.suite)
    try:
        names = suites.expand_names(args.models or ",".join(models.MODELS), models)
    except ValueError as e:
        parser.error(str(e))
    try:
        opsets = [int(o) for o in args.opsets.split(",") if o] if args.opsets else [None]
    except ValueError:
        parser.error(f"--opsets takes comma-separated integers, got {args.opsets!r}")
    if any(o is not None and not 7 <= o <= 17 for o in opsets):
        parser.error(f"--opsets: PyTorch {torch.__version__.split('+')[0]} exports opsets 7 to 17, got {args.opsets}")
    failed = 0
    for opset in opsets:
        out = opset_dir(args.out, opset) if opset else args.out
        out.mkdir(parents=True, exist_ok=True)
        label = f" at opset {opset}" if opset else ""
        for name in names:
            refused = refusal_file(out, name)
            if not args.force and (all(p.exists() for p in model_files(out, name)) or refused.exists()):
                print(f"{name}{label}: {'refused by the exporter' if refused.exists() else 'present'} in {out}")
                continue
            start = time.perf_counter()
            try:
                d = export_model(name, out, models, opset)
            except ExporterRefusal as e:  # recorded: the exporter's limit, not a failure of this script
                for p in model_files(out, name):
                    p.unlink(missing_ok=True)
                refused.write_text(f"{e}\n")
                print(f"{name}{label}: refused by PyTorch's exporter: {e}")
                continue
            except Exception as e:  # one model's failure must not hide the others
                failed += 1
                print(f"{name}{label}: FAILED: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
                continue
            refused.unlink(missing_ok=True)
            size = (out / f"{name}.onnx").stat().st_size / 2**20
            print(f"{name}{label}: exported {d['input']}{tuple(d['input_shape'])} -> {d['output']}"
                  f"{tuple(d['output_shape'])}, {size:.1f} MiB, {time.perf_counter() - start:.1f} s", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
