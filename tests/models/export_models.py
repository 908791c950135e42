"""Exports the model suite (model_zoo.py) to ONNX with its input and PyTorch's output.

For each model NAME it writes into the cache folder NAME.onnx (opset 13,
constants folded), NAME.input.npy, NAME.expected.npy (PyTorch's output on
that input) and NAME.json (the ONNX input and output names and shapes).
Models already there are skipped unless --force.

    /usr/bin/python3 tests/models/export_models.py [--out DIR] [--models mlp,resnet18] [--force]
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import model_zoo  # noqa: E402

OPSET = 13


def default_cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    # Not switchyard/models: that is the kernel cache's folder of model.so objects.
    return Path(base) / "switchyard" / "suite"


def model_files(out, name):
    return [out / f"{name}{suffix}" for suffix in (".onnx", ".input.npy", ".expected.npy", ".json")]


def _value_info(value):
    return value.name, [d.dim_value for d in value.type.tensor_type.shape.dim]


def export_model(name, out):
    """Exports one model; returns its description (what NAME.json holds)."""
    model = model_zoo.build_model(name)
    x = model_zoo.make_input(name)
    with torch.no_grad():
        expected = model(torch.from_numpy(x)).numpy()

    # Written under temporary names and renamed at the end, with NAME.json
    # last: an interrupted export never looks present to the next run.
    onnx_path, input_path, expected_path, json_path = model_files(out, name)
    partial = out / f"{name}.partial.onnx"
    torch.onnx.export(model, (torch.from_numpy(x),), str(partial), opset_version=OPSET, do_constant_folding=True,
                      input_names=["input"], output_names=["output"])
    graph = onnx.load(str(partial))
    onnx.checker.check_model(graph)
    # The names and shapes are read back from the file, not restated, so
    # they are what an importer will see.
    (input_name, input_shape), = [_value_info(v) for v in graph.graph.input]
    (output_name, output_shape), = [_value_info(v) for v in graph.graph.output]
    if list(x.shape) != input_shape or list(expected.shape) != output_shape:
        raise RuntimeError(f"exported shapes {input_shape} -> {output_shape} differ from PyTorch's "
                           f"{list(x.shape)} -> {list(expected.shape)}")
    description = {
        "model": name,
        "input": input_name,
        "input_shape": input_shape,
        "output": output_name,
        "output_shape": output_shape,
        "opset": OPSET,
        "torch": torch.__version__,
    }
    os.replace(partial, onnx_path)
    for path, array in ((input_path, x), (expected_path, expected)):
        np.save(str(path) + ".partial.npy", array)
        os.replace(str(path) + ".partial.npy", path)
    json_path.with_suffix(".json.partial").write_text(json.dumps(description, indent=2) + "\n")
    os.replace(json_path.with_suffix(".json.partial"), json_path)
    return description


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=default_cache_dir(), help="cache folder (default: %(default)s)")
    parser.add_argument("--models", default=",".join(model_zoo.MODELS),
                        help="comma-separated names (default: %(default)s)")
    parser.add_argument("--force", action="store_true", help="export again even if present")
    args = parser.parse_args()

    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in model_zoo.MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(model_zoo.MODELS)}")
    args.out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name in names:
        if not args.force and all(p.exists() for p in model_files(args.out, name)):
            print(f"{name}: present in {args.out}")
            continue
        start = time.perf_counter()
        try:
            d = export_model(name, args.out)
        except Exception as e:  # one model's failure must not hide the others
            failed += 1
            print(f"{name}: FAILED: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            continue
        size = (args.out / f"{name}.onnx").stat().st_size / 2**20
        print(f"{name}: exported {d['input']}{tuple(d['input_shape'])} -> {d['output']}{tuple(d['output_shape'])}, "
              f"{size:.1f} MiB, {time.perf_counter() - start:.1f} s")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
