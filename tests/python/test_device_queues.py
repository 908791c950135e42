# Devices that run at once (issue 38): a split suite model (ResNet-18, its
# last stage placed on cpu:1) run with its device queues at once, each
# pinned to a core given at load, equals the in-order run of the same
# artifact bit for bit; core sets given at load that are malformed,
# shared or outside the machine are refused naming the device and core.
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import switchyard as sy

REPO = Path(__file__).resolve().parents[2]
SWITCHYARD = Path(os.environ.get("SY_BUILD_DIR", REPO / "build")) / "bin" / "switchyard"
MLP = REPO / "tests" / "fuzz" / "corpus" / "pipeline" / "mlp_two_devices.sy"


def test_resnet18_split_across_two_pinned_devices_matches_its_in_order_run_bit_for_bit(suite, tmp_path):
    info = json.loads((suite / "resnet18.json").read_text())
    mod = sy.frontend.from_onnx(suite / "resnet18.onnx")
    x = np.load(suite / "resnet18.input.npy")
    # The stem and first stage on cpu:0, the last stage and the classifier on cpu:1.
    sy.build(mod, ["cpu:0", "cpu:1"], tmp_path / "split",
             place=["node:/conv1*=cpu:0", "node:/layer1/*=cpu:0", "node:/layer4/*=cpu:1", "node:/fc/*=cpu:1"])
    # The same artifact, every step in program order on one thread (the CLI's --in-order).
    np.save(tmp_path / "x.npy", x)
    subprocess.run([str(SWITCHYARD), "run", str(tmp_path / "split"), "--input", f"{info['input']}={tmp_path / 'x.npy'}",
                    "-o", str(tmp_path / "out"), "--in-order", "--cores", "cpu:0=0", "--cores", "cpu:1=1"],
                   check=True, capture_output=True)
    (output,) = json.loads((tmp_path / "split" / "manifest.json").read_text())["outputs"]
    expected = np.load(tmp_path / "out" / f"{output['name']}.npy")
    np.testing.assert_allclose(expected, np.load(suite / "resnet18.expected.npy"), rtol=1e-3, atol=1e-3)
    split = sy.runtime.load(tmp_path / "split", cores={"cpu:0": "0", "cpu:1": [1]})
    for _ in range(3):
        assert np.array_equal(split.run(**{info["input"]: x}), expected)
    # Both devices ran kernels, each on the core given at load.
    assert {k.device for k in split.last_stats.kernels} == {"cpu:0", "cpu:1"}
    # Pipelined, several requests in flight share each worker's primitive
    # scratch one step at a time: each still gets exactly its own outputs.
    inputs = [x * np.float32(1 + k / 8) for k in range(6)]
    one_at_a_time = [split.run(**{info["input"]: i}) for i in inputs]
    futures = [split.run_async(**{info["input"]: i}) for i in inputs]
    assert all(np.array_equal(f.result(timeout=120), want) for f, want in zip(futures, one_at_a_time))
    assert [d.get("cores") for d in split.manifest["devices"]] == [[0], [1]]


@pytest.mark.parametrize("cores, message", [
    ({"cpu:1": "1x"}, "core set '1x' of cpu:1: unexpected 'x' at character 2"),
    ({"cpu:0": "0", "cpu:1": "0"}, "core 0 is in the core sets of both cpu:0 and cpu:1"),
    ({"cpu:1": "1000"}, "cpu:1: core 1000 is not a core this process may run on"),
    ({"cpu:9": "0"}, "cores for cpu:9, which is not a device of this model"),
])
def test_bad_core_sets_at_load_name_the_device_and_core(tmp_path, cores, message):
    subprocess.run([str(SWITCHYARD), "compile", str(MLP), "-o", str(tmp_path / "mlp"),
                    "--devices", "cpu:0,cpu:1"], check=True, capture_output=True)
    with pytest.raises(sy.RuntimeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        sy.runtime.load(tmp_path / "mlp", cores=cores)


def test_run_says_when_threads_do_not_reach_a_device_with_cores_of_its_own(tmp_path):
    # --threads sizes the shared pool; a device pinned to one core runs one
    # thread there, and the CLI says so rather than let the flag do nothing.
    x = tmp_path / "x.npy"
    np.save(x, np.ones((4, 8), np.float32))
    chain = tmp_path / "chain.sy"
    chain.write_text("def @main(%x: Tensor[(4, 8), float32]) -> Tensor[(4, 8), float32] {\n  nn.relu(exp(%x))\n}\n")
    subprocess.run([str(SWITCHYARD), "compile", str(chain), "-o", str(tmp_path / "a"), "--devices", "cpu:0",
                    "--cores", "cpu:0=0"], check=True, capture_output=True)
    run = lambda *flags: subprocess.run([str(SWITCHYARD), "run", str(tmp_path / "a"), "--input", f"x={x}", "-o",
                                         str(tmp_path / "out"), *flags], check=True, capture_output=True, text=True)
    err = run("--threads", "2").stderr
    assert ("note: --threads 2 is the shared pool's; cpu:0 runs its own 1 thread on core 0 "
            "(its core set: --cores cpu:0=LIST gives it others)") in err, err
    assert "note:" not in run("--threads", "1").stderr
    np.testing.assert_allclose(np.load(tmp_path / "out" / "output_0.npy"), np.maximum(np.exp(1.0), 0), rtol=1e-6)
