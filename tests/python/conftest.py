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


def conv_dense_model(path):
    """y = relu(conv(x, w) + b) flattened @ d: weights of 216, 8 and 512 elements."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(3)
    initializers = [numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
                    for name, shape in [("w", (8, 3, 3, 3)), ("b", (8,)), ("d", (128, 4))]]
    initializers.append(numpy_helper.from_array(np.array([1, 128], np.int64), "shape"))
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="stem/conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="stem/relu"),
             helper.make_node("MaxPool", ["r"], ["p"], name="stem/pool", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Reshape", ["p", "shape"], ["f"], name="head/flatten"),
             helper.make_node("MatMul", ["f", "d"], ["y"], name="head/dense")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], initializers)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return path


@pytest.fixture
def conv_dense_onnx(tmp_path):
    """A small imported-model stand-in: conv, relu, pool, flatten, dense, as an ONNX file."""
    return conv_dense_model(tmp_path / "conv_dense.onnx")


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
