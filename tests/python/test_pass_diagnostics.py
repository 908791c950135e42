# Warnings a pass reports without failing (PlanDevices moving an operator its
# device's target cannot run to the host) reach the caller: Python raises
# them as warnings and keeps them on the PassContext; the CLI prints them on
# stderr, source line and caret included.
import os
import pathlib
import subprocess
import warnings

import pytest

import switchyard as sy
from switchyard import transform as T

REPO = pathlib.Path(__file__).resolve().parents[2]
SWITCHYARD = (pathlib.Path(os.environ.get("SY_BUILD_DIR", REPO / "build")) / "bin" / "switchyard").resolve()

ON_CUDA = """def @main(%x: Tensor[(1, 4), float32] @cuda:0, %s: Tensor[(4), float32]) -> Tensor[(1, 4), float32] {
  %0 = nn.batch_norm(%x, %s, %s, %s, %s);
  %0.0
}
"""
WARNING = "cuda.sy:2:8: warning: 'nn.batch_norm' cannot run on cuda:0 (target 'cuda'): it falls back to the host cpu:0"


def plan(ctx=None):
    mod = sy.parse(ON_CUDA, source_name="cuda.sy")
    return T.Sequential([T.InferType(), T.PlanDevices(["cpu:0", "cuda:0"])])(mod, ctx)


def test_a_fallback_is_a_python_warning_and_kept_on_the_context():
    ctx = T.PassContext()
    with pytest.warns(UserWarning, match="'nn.batch_norm' cannot run on cuda:0"):
        plan(ctx)
    assert [name for name, _ in ctx.diagnostics] == ["PlanDevices"]
    assert ctx.diagnostics[0][1].startswith(WARNING)


def test_the_warnings_filter_can_make_a_fallback_an_error():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="falls back to the host"):
            plan(T.PassContext())


def test_a_plan_without_fallbacks_reports_nothing():
    ctx = T.PassContext()
    mod = sy.parse(ON_CUDA.replace("@cuda:0", "@cpu:0"), source_name="cpu.sy")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        T.Sequential([T.InferType(), T.PlanDevices(["cpu:0", "cuda:0"])])(mod, ctx)
    assert ctx.diagnostics == []


@pytest.mark.skipif(not SWITCHYARD.exists(), reason="the switchyard CLI is not built")
def test_the_cli_prints_a_fallback_on_stderr(tmp_path):
    model = tmp_path / "cuda.sy"
    model.write_text(ON_CUDA)
    result = subprocess.run([str(SWITCHYARD), "opt", str(model), "-p", "InferType,PlanDevices", "--devices",
                             "cpu:0,cuda:0"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith(WARNING.replace("cuda.sy", str(model)) + "\n    %0 = nn.batch_norm(%x, %s, %s, %s, %s);\n         ^")
