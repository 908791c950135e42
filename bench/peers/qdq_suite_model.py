"""The five-model suite's quantized member: ResNet-50 as a QDQ model (ONNX
Runtime's static quantization format), made by tests/models/qdq_model.py
from the suite's float export, with activation ranges calibrated on four
sample inputs. No PyTorch output can be its reference (PyTorch runs the
float model), so its expected output is ONNX Runtime's on the same file and
input: Switchyard's row is checked against ONNX Runtime's result.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests" / "models"))
import qdq_model  # noqa: E402
from export_models import model_files  # noqa: E402

# QDQ model name -> the suite's float model it quantizes.
QDQ_MODELS = {"resnet50_qdq": "resnet50"}

# max |Switchyard - ORT| over max |ORT|. Each implementation rounds its
# requantizations its own way (ONNX Runtime folds scales into one
# multiplier; Switchyard rounds as oneDNN does, or as ONNX's formula), each
# within one quantum a layer, and the differences add up over 50 layers:
# measured 0.9 % of the largest output (bench/qdq_bench.py), where each
# implementation's last activation is up to 2 steps from ONNX's exact
# formula.
TOLERANCE = 0.02

PYTORCH_ERROR = "no peer: a QDQ model"


def ensure_qdq_files(name, folder, build, node_modules):
    """Writes NAME's files (model_files) into `folder` unless they are there;
    returns why it could not, or None."""
    files = model_files(folder, name)
    if all(p.exists() for p in files):
        return None
    source = QDQ_MODELS[name]
    float_files = model_files(folder, source)
    if not all(p.exists() for p in float_files):
        return f"the float model {source} was not exported"
    model = onnx.load(str(float_files[0]))
    names = qdq_model.quantized_tensors(model.graph)
    ranges = qdq_model.activation_ranges(model, names, qdq_model.calibration_inputs(model, 4), build)
    partial = folder / f"{name}.partial.onnx"
    onnx.save(qdq_model.make_qdq(model, ranges), str(partial))
    raw = folder / f"{name}.ort.partial.raw"
    env = dict(os.environ, NODE_PATH=str(node_modules))
    ran = subprocess.run(["node", str(HERE / "ort_bench.js"), "--model", str(partial), "--input", str(float_files[1]),
                          "--threads", "1", "--warmup", "0", "--runs", "1", "--output", str(raw)],
                         env=env, capture_output=True, text=True)
    if ran.returncode != 0:
        partial.unlink(missing_ok=True)
        return f"ONNX Runtime could not run {partial.name}: {(ran.stderr or ran.stdout).strip()[:200]}"
    expected = np.fromfile(raw, np.float32).reshape(np.load(float_files[2]).shape)
    raw.unlink()
    description = json.loads(float_files[3].read_text())
    description.update(model=name, quantized_from=source, reference="onnxruntime")
    os.replace(partial, files[0])
    np.save(files[1], np.load(float_files[1]))
    np.save(files[2], expected)
    files[3].write_text(json.dumps(description, indent=2) + "\n")
    return None
