# Shared fixtures for the Python tests: the package import (from the build
# directory named by SY_BUILD_DIR when PYTHONPATH does not already have it),
# the example models and the exported model suite.
import os
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "tests" / "data"

if "SY_BUILD_DIR" in os.environ:
    sys.path.insert(0, str(pathlib.Path(os.environ["SY_BUILD_DIR"]) / "python"))


@pytest.fixture(scope="session")
def suite():
    """The model suite's folder (tests/models/export_models.py exports what is missing)."""
    import subprocess
    cache = pathlib.Path(os.environ.get("SY_MODEL_CACHE", REPO / "build" / "models"))
    subprocess.run([sys.executable, str(REPO / "tests/models/export_models.py"), "--out", str(cache)], check=True)
    return cache


@pytest.fixture
def mlp_path():
    return EXAMPLES / "mlp_two_devices.sy"


@pytest.fixture
def mlp_inputs():
    import numpy as np
    rng = np.random.default_rng(7)
    return {
        "x": rng.standard_normal((1, 784)).astype(np.float32),
        "w1": (rng.standard_normal((512, 784)) * 0.05).astype(np.float32),
        "b1": rng.standard_normal(512).astype(np.float32),
        "w2": (rng.standard_normal((10, 512)) * 0.05).astype(np.float32),
        "b2": rng.standard_normal(10).astype(np.float32),
    }


def mlp_reference(inputs):
    import numpy as np
    hidden = np.maximum(inputs["x"] @ inputs["w1"].T + inputs["b1"], 0)
    return hidden @ inputs["w2"].T + inputs["b2"]


@pytest.fixture(scope="session")
def mlp_artifact(tmp_path_factory):
    """The two-device MLP compiled once per session: (its IRModule, its artifact directory)."""
    import switchyard as sy
    mod = sy.parse(EXAMPLES / "mlp_two_devices.sy")
    out = tmp_path_factory.mktemp("mlp") / "artifact"
    sy.build(mod, devices=["cpu:0", "cpu:1"], output=out)
    return mod, out


def is_call_of(expr, name):
    from switchyard import ir
    return isinstance(expr, ir.Call) and isinstance(expr.op, ir.Op) and expr.op.name == name


def calls_of(expr, name):
    """The calls of operator `name` in `expr`, in visiting order."""
    from switchyard import ir
    found = []

    class Collect(ir.ExprVisitor):
        def visit_call(self, call):
            if is_call_of(call, name):
                found.append(call)

    Collect().visit(expr)
    return found
