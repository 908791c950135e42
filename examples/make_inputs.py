"""Writes random inputs for a text-IR model's @main parameters as .npy files.

Usage: /usr/bin/python3 examples/make_inputs.py MODEL.sy OUT_DIR [SEED]
Prints the --input flags for `switchyard run` / `switchyard run-ir`.
"""
import re
import sys

import numpy as np


def main_parameters(text):
    """(name, shape, dtype) of each parameter of def @main, in order."""
    header = text[text.index("def @main("):]
    header = header[: header.index("{")]
    params = []
    for name, dims, dtype in re.findall(r"%(\w+):\s*Tensor\[\(([^)]*)\),\s*(\w+)\]", header):
        shape = tuple(int(d) for d in dims.split(",") if d.strip())
        params.append((name, shape, dtype))
    return params


def main():
    model, out_dir = sys.argv[1], sys.argv[2]
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    rng = np.random.default_rng(seed)
    flags = []
    for name, shape, dtype in main_parameters(open(model).read()):
        scale = 1.0 / np.sqrt(shape[-1]) if len(shape) > 1 else 0.1
        value = (rng.standard_normal(shape) * scale).astype(dtype)
        path = f"{out_dir}/{name}.npy"
        np.save(path, value)
        flags.append(f"--input {name}={path}")
    print(" ".join(flags))


if __name__ == "__main__":
    main()
