# The two-device MLP of tests/data through the command line: where the
# switchyard binary is, and running an artifact of it on seeded inputs.
import os
import pathlib
import subprocess

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]
SWITCHYARD = pathlib.Path(os.environ.get("SY_BUILD_DIR", REPO / "build")) / "bin" / "switchyard"
MODEL = REPO / "tests" / "data" / "mlp_two_devices.sy"


def run_model(artifact, tmp_path):
    """Runs `artifact` (the MLP) on seeded inputs; returns its output."""
    inputs = []
    rng = np.random.default_rng(1)
    for name, shape in (("x", (1, 784)), ("w1", (512, 784)), ("b1", (512,)), ("w2", (10, 512)), ("b2", (10,))):
        path = tmp_path / f"{name}.npy"
        np.save(path, rng.standard_normal(shape).astype(np.float32))
        inputs += ["--input", f"{name}={path}"]
    out = tmp_path / f"out_{artifact.name}"
    result = subprocess.run([str(SWITCHYARD), "run", str(artifact), *inputs, "--output-dir", str(out)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return np.load(next(out.glob("*.npy")))
