# A build whose only device is a GPU gets cpu:0 as its host, as TVM adds a
# host target: the entry and the staging of inputs and outputs run there.
# Building needs no GPU; without a CUDA toolkit it is the no-toolkit error.
# Issue 39: `--devices cuda:0` compiled the entry for cuda:0's target and
# crashed through a null pointer, from Python and the CLI alike.
import json
import os
import pathlib
import subprocess

import pytest

import switchyard as sy

REPO = pathlib.Path(__file__).resolve().parents[2]
SWITCHYARD = (pathlib.Path(os.environ.get("SY_BUILD_DIR", REPO / "build")) / "bin" / "switchyard").resolve()
NO_TOOLKIT = "this Switchyard was built without a CUDA toolkit"

MODEL = """def @main(%x: Tensor[(3, 8), float32], %y: Tensor[(8), float32]) -> Tensor[(3, 8), float32] {
  nn.relu(add(%x, %y))
}
"""


def manifest_parts(directory):
    manifest = json.loads((pathlib.Path(directory) / "manifest.json").read_text())
    return {key: manifest[key] for key in ("devices", "inputs", "outputs", "kernels", "copies")}


def build_or_no_toolkit(devices, output):
    """The build's manifest, or None where this Switchyard has no CUDA toolkit
    (the build must then fail with that error and leave nothing)."""
    mod = sy.parse(MODEL, source_name="gpu_only.sy")
    try:
        sy.build(mod, devices=devices, output=output)
    except sy.BackendError as error:
        assert NO_TOOLKIT in str(error), str(error)
        assert not pathlib.Path(output).exists()
        return None
    return manifest_parts(output)


def test_a_gpu_only_build_from_python_gets_cpu0_as_its_host(tmp_path):
    alone = build_or_no_toolkit(["cuda:0"], tmp_path / "alone")
    with_host = build_or_no_toolkit(["cuda:0", "cpu:0"], tmp_path / "with_host")
    if alone is None:
        assert with_host is None
        pytest.skip("this Switchyard has no CUDA toolkit: a cuda:0 build is the no-toolkit error (checked)")
    assert [d["name"] for d in alone["devices"]] == ["cuda:0", "cpu:0"]
    assert alone == with_host


def test_naming_a_gpu_as_the_host_is_a_usage_error(tmp_path):
    mod = sy.parse(MODEL, source_name="gpu_only.sy")
    with pytest.raises(sy.UsageError, match=r"cuda:0 cannot be the host .*: name a cpu device, or leave the host out"):
        sy.build(mod, devices=["cuda:0"], host="cuda:0", output=tmp_path / "out")


@pytest.mark.skipif(not SWITCHYARD.exists(), reason="the switchyard CLI is not built")
def test_a_gpu_only_build_from_the_cli_gets_cpu0_as_its_host(tmp_path):
    model = tmp_path / "gpu_only.sy"
    model.write_text(MODEL)
    result = subprocess.run([str(SWITCHYARD), "compile", str(model), "-o", str(tmp_path / "art"), "--devices",
                             "cuda:0"],
                            capture_output=True, text=True, timeout=300)
    if result.returncode == 1 and NO_TOOLKIT in result.stderr:
        pytest.skip("this Switchyard has no CUDA toolkit: a cuda:0 build is the no-toolkit error (checked)")
    assert result.returncode == 0, (result.returncode, result.stderr)
    assert "memory cuda:0 " in result.stdout and ", cpu:0 " in result.stdout, result.stdout
    assert [d["name"] for d in manifest_parts(tmp_path / "art")["devices"]] == ["cuda:0", "cpu:0"]
