# Placement by time (issue 38) from the command line: `profile` measures a
# cost file, `compile --objective latency --costs` splits two equal branches
# across two CPU devices (and the split artifact computes what numpy does),
# `inspect` predicts the run time per device and the critical path (of a
# model, and of an artifact, with what runs measure beside it), and each
# bad input is an error naming what is wrong.
import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SWITCHYARD = pathlib.Path(os.environ.get("SY_BUILD_DIR", REPO / "build")) / "bin" / "switchyard"
TWO_BRANCHES = REPO / "tests" / "data" / "two_branches.sy"
CHAIN = ("def @main(%x: Tensor[(4, 8), float32]) -> Tensor[(4, 8), float32] {\n"
         "  nn.relu(exp(%x))\n"
         "}\n")


def switchyard(*args, cache, ok=True):
    result = subprocess.run([str(SWITCHYARD), *map(str, args)], capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, XDG_CACHE_HOME=str(cache)))
    if ok:
        assert result.returncode == 0, result.stderr
    else:
        assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    return result


def profile(tmp_path, model=TWO_BRANCHES):
    costs = tmp_path / "costs.json"
    switchyard("profile", model, "--device", "cpu:0", "--device", "cpu:1", "--repeat", "3", "-o", costs,
               cache=tmp_path / "cache")
    return costs


def equal_devices(costs):
    # This machine's two CPU devices share its cores and measure the same
    # but for noise; the test takes the noise out so the plan is the model's.
    # The all-cores candidate gains nothing from its second thread and the
    # hand-off costs nothing, so the split is the plan.
    data = json.loads(costs.read_text())
    for op in data["operators"]:
        op["median_ms"]["cpu:1"] = op["median_ms"]["cpu:0"]
        data["all_cores"]["operator_ms"][op["key"]] = op["median_ms"]["cpu:0"]
    data["handoff_ms"] = 0
    data["all_cores"]["overhead_ms"] = max(d["overhead_ms"] for d in data["devices"])
    costs.write_text(json.dumps(data))


def test_profile_records_operators_devices_copies_and_the_machine(tmp_path):
    data = json.loads(profile(tmp_path).read_text())
    assert data["format"] == "switchyard-costs" and data["version"] == 2
    assert data["machine"]["cpu_model"]
    assert [d["name"] for d in data["devices"]] == ["cpu:0", "cpu:1"]
    texts = [op["operator"] for op in data["operators"]]
    assert any(t.startswith("nn.dense(units=None) : (Tensor[(64, 256), float32], Tensor[(256, 256), float32])")
               for t in texts), texts
    for op in data["operators"]:
        assert set(op["median_ms"]) == {"cpu:0", "cpu:1"}
        assert all(ms >= 0 for ms in op["median_ms"].values())
    dense = [op for op in data["operators"] if op["operator"].startswith("nn.dense")][0]
    assert dense["median_ms"]["cpu:0"] > 0
    # Each kernel whole too: its operators in order, with the device it ran on.
    kernels = [k for k in data["kernels"] if k["operators"].startswith("nn.dense") and " -> nn.relu : " in k["operators"]]
    assert {k["device"] for k in kernels} == {"cpu:0", "cpu:1"}, data["kernels"]
    assert all(len(k["key"]) == 16 and k["median_ms"] > 0 for k in kernels)
    routes = {(c["source"], c["destination"]) for c in data["copies"]}
    assert routes == {("cpu:0", "cpu:1"), ("cpu:1", "cpu:0")}
    # The other candidate (the first device with every core), the run overheads and the hand-off.
    assert data["handoff_ms"] >= 0 and all(d["overhead_ms"] >= 0 for d in data["devices"])
    all_cores = data["all_cores"]
    assert all_cores["device"] == "cpu:0" and all_cores["threads"] >= 1 and all_cores["run_ms"] > 0
    assert set(all_cores["operator_ms"]) == {op["key"] for op in data["operators"]}
    assert all_cores["operator_ms"][dense["key"]] > 0
    # Each split the costs planned was built and run: where it ran slower
    # than predicted, the difference went onto the hand-off, per hand-off.
    charged = 0
    for check in data["split_checks"]:
        assert check["handoffs"] >= 0 and check["predicted_ms"] > 0 and check["measured_ms"] > 0, check
        assert check["one_device_ms"] > 0, check
        # A plan without hand-offs has nothing to charge (its check calibrates the times instead).
        slower = max(0.0, check["measured_ms"] - check["predicted_ms"]) if check["handoffs"] else 0.0
        assert abs(check["charged_ms"] * max(1, check["handoffs"]) - slower) <= 1e-6 * max(1.0, slower), check
        charged += check["charged_ms"]
    assert len(data["split_checks"]) <= 3
    assert data["handoff_ms"] >= charged - 1e-9, (data["handoff_ms"], charged)


def test_profile_probes_whether_the_devices_cores_run_at_once_and_warns_when_one_was_busy(tmp_path):
    if not {0, 1} <= os.sched_getaffinity(0):
        pytest.skip(f"needs cores 0 and 1; this process may run on {sorted(os.sched_getaffinity(0))}")
    costs = tmp_path / "costs.json"
    flags = ["profile", TWO_BRANCHES, "--device", "cpu:0", "--device", "cpu:1", "--cores", "cpu:0=0", "--cores",
             "cpu:1=1", "--repeat", "3", "-o", costs]
    share = r"cores 0 and 1 at once keep (\d+\.\d\d) and (\d+\.\d\d) of their speed alone"
    quiet = switchyard(*flags, cache=tmp_path / "cache")
    probes = re.findall(share, quiet.stdout)
    assert len(probes) == 2 and all(float(s) > 0 for probe in probes for s in probe), quiet.stdout
    # Another process busy on core 1 halves what core 1 does alone: the
    # kernels measured there are slower than they will run.
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=lambda: os.sched_setaffinity(0, {1}))
    try:
        busy = switchyard(*flags, cache=tmp_path / "cache")
    finally:
        hog.kill()
        hog.wait()
    assert re.search(r"warning: while profiling, core 1 alone ran at 0\.[0-7]\d of core 0's speed \(another load on "
                     r"it\)", busy.stderr), busy.stderr
    assert costs.exists()  # a warning, not a refusal: the costs are written


def test_profile_refuses_devices_sharing_a_core_before_measuring(tmp_path):
    result = switchyard("profile", TWO_BRANCHES, "--device", "cpu:0", "--device", "cpu:1", "--cores", "cpu:0=0",
                        "--cores", "cpu:1=0", "-o", tmp_path / "costs.json", cache=tmp_path / "cache", ok=False)
    assert "core 0 is in the core sets of both cpu:0 and cpu:1" in result.stderr
    assert "kernels" not in result.stdout and not (tmp_path / "costs.json").exists()


def test_profile_runs_the_splits_it_plans_and_charges_their_slowness_to_the_hand_off(tmp_path):
    # One core per device, as a split on this machine would run: profile
    # plans from what it measured, builds and runs that split beside one
    # device with every core, and plans again while a split ran more than a
    # tenth slower than predicted or slower than one device in the same
    # turns (at most three times).
    costs = tmp_path / "costs.json"
    out = switchyard("profile", TWO_BRANCHES, "--device", "cpu:0", "--device", "cpu:1", "--cores", "cpu:0=0",
                     "--cores", "cpu:1=1", "--repeat", "5", "-o", costs, cache=tmp_path / "cache").stdout
    checks = json.loads(costs.read_text())["split_checks"]
    lines = [line for line in out.splitlines() if line.startswith("split check")]
    numbered = [line for line in lines if line.startswith("split check ") and line[12].isdigit()]
    assert len(numbered) == len(checks) <= 3, (out, checks)
    for number, (line, check) in enumerate(zip(numbered, checks), start=1):
        assert line.startswith(f"split check {number}: {check['handoffs']} hand-offs, predicted "), line
        assert ("hand-off charged" in line) == (check["charged_ms"] > 0), line

    def planned_again(check):  # it ran slow, lost to one device, or had no hand-off and calibrated the times
        return (check["measured_ms"] > 1.1 * check["predicted_ms"] or check["measured_ms"] > check["one_device_ms"]
                or check["handoffs"] == 0)

    for line in numbered:  # the one-device candidate is calibrated by every check
        assert "calibrated to these runs" in line, line
    if checks:  # to its runs in turns with the last split, not to the profile's own run
        all_cores = json.loads(costs.read_text())["all_cores"]
        assert abs(all_cores["run_ms"] - checks[-1]["one_device_ms"]) <= 1e-6 * all_cores["run_ms"], (all_cores, checks)
    for check in checks[:-1]:
        assert planned_again(check), checks
    if not checks or (len(checks) < 3 and planned_again(checks[-1])):
        # Planning stopped because the charged or calibrated costs no longer split.
        assert re.fullmatch(r"split check: (calibrated to the runs in turns, )?these costs plan "
                            r"(one device with every core|no hand-off)", lines[-1]), out


def test_latency_objective_chooses_one_device_with_every_core_when_that_is_faster(tmp_path):
    costs = profile(tmp_path)
    equal_devices(costs)
    data = json.loads(costs.read_text())
    for key in data["all_cores"]["operator_ms"]:
        data["all_cores"]["operator_ms"][key] *= 0.3
    costs.write_text(json.dumps(data))
    art = tmp_path / "art"
    out = switchyard("compile", TWO_BRANCHES, "--devices", "cpu:0,cpu:1", "--objective", "latency", "--costs", costs,
                     "--cores", "cpu:0=0", "--cores", "cpu:1=1", "-o", art, cache=tmp_path / "cache").stdout
    assert "one device with every core: cpu:0 with 2 threads" in out and ": chose one device" in out, out
    manifest = json.loads((art / "manifest.json").read_text())
    assert {k["device"] for k in manifest["kernels"]} == {0}, manifest["kernels"]
    assert manifest["devices"][0]["cores"] == [0, 1], manifest["devices"]
    assert not manifest["devices"][1].get("cores"), manifest["devices"]
    why = switchyard("explain", TWO_BRANCHES, "--devices", "cpu:0,cpu:1", "--objective", "latency", "--costs", costs,
                     "--node", "%4", cache=tmp_path / "cache").stdout
    assert "because one device with every core (cpu:0, 2 threads) is predicted to run the model in" in why, why
    # The same result as numpy.
    rng = np.random.default_rng(1)
    arrays = {"x": rng.standard_normal((64, 256)), **{w: rng.standard_normal((256, 256)) / 16
                                                      for w in ("a1", "a2", "b1", "b2")}}
    args = []
    for name, a in arrays.items():
        np.save(tmp_path / f"{name}.npy", a.astype(np.float32))
        args += ["--input", f"{name}={tmp_path / (name + '.npy')}"]
    switchyard("run", art, *args, "-o", tmp_path / "out", cache=tmp_path / "cache")
    relu = lambda v: np.maximum(v, 0)
    want = (np.tanh(relu(arrays["x"] @ arrays["a1"].T) @ arrays["a2"].T)
            + np.tanh(relu(arrays["x"] @ arrays["b1"].T) @ arrays["b2"].T))
    np.testing.assert_allclose(np.load(tmp_path / "out" / "output_0.npy"), want, rtol=1e-4, atol=1e-4)


def test_latency_objective_splits_two_equal_branches_and_computes_the_same(tmp_path):
    costs = profile(tmp_path)
    equal_devices(costs)
    art = tmp_path / "art"
    compiled = switchyard("compile", TWO_BRANCHES, "--devices", "cpu:0,cpu:1", "--objective", "latency", "--costs",
                          costs, "-o", art, cache=tmp_path / "cache").stdout
    assert "predicted run time" in compiled and "critical path:" in compiled, compiled
    # An artifact-cache hit predicts the same.
    again = switchyard("compile", TWO_BRANCHES, "--devices", "cpu:0,cpu:1", "--objective", "latency", "--costs",
                       costs, "-o", tmp_path / "again", cache=tmp_path / "cache").stdout
    assert "from the artifact cache" in again, again
    assert again.split("\n", 1)[1] == compiled.split("\n", 1)[1], (again, compiled)
    manifest = json.loads((art / "manifest.json").read_text())
    devices = {k["device"] for k in manifest["kernels"]}
    assert devices == {0, 1}, manifest["kernels"]
    rng = np.random.default_rng(0)
    arrays = {"x": rng.standard_normal((64, 256)), **{w: rng.standard_normal((256, 256)) / 16
                                                      for w in ("a1", "a2", "b1", "b2")}}
    args = []
    for name, a in arrays.items():
        np.save(tmp_path / f"{name}.npy", a.astype(np.float32))
        args += ["--input", f"{name}={tmp_path / (name + '.npy')}"]
    switchyard("run", art, *args, "-o", tmp_path / "out", cache=tmp_path / "cache")
    got = np.load(tmp_path / "out" / "output_0.npy")
    relu = lambda v: np.maximum(v, 0)
    want = (np.tanh(relu(arrays["x"] @ arrays["a1"].T) @ arrays["a2"].T)
            + np.tanh(relu(arrays["x"] @ arrays["b1"].T) @ arrays["b2"].T))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    # The bytes objective (the default) keeps it on one device.
    switchyard("compile", TWO_BRANCHES, "--devices", "cpu:0,cpu:1", "-o", tmp_path / "bytes", cache=tmp_path / "cache")
    bytes_manifest = json.loads((tmp_path / "bytes" / "manifest.json").read_text())
    assert {k["device"] for k in bytes_manifest["kernels"]} == {0}


def test_inspect_predicts_time_per_device_and_the_critical_path(tmp_path):
    costs = profile(tmp_path)
    equal_devices(costs)
    out = switchyard("inspect", TWO_BRANCHES, "--devices", "cpu:0,cpu:1", "--objective", "latency", "--costs", costs,
                     cache=tmp_path / "cache").stdout
    assert "predicted run time" in out, out
    assert "  cpu:0: compute" in out and "  cpu:1: compute" in out, out
    assert "critical path: parameter %x" in out, out


def test_an_artifact_keeps_its_prediction_and_runs_measure_each_device_beside_it(tmp_path):
    costs = profile(tmp_path)
    equal_devices(costs)
    cache = tmp_path / "cache"
    art = tmp_path / "art"
    compiled = switchyard("compile", TWO_BRANCHES, "--devices", "cpu:0,cpu:1", "--objective", "latency", "--costs",
                          costs, "-o", art, cache=cache).stdout
    predicted = float(re.search(r"predicted run time ([0-9.]+) ms", compiled).group(1))
    prediction = json.loads((art / "manifest.json").read_text())["prediction"]
    assert abs(prediction["run_ms"] - predicted) < 1e-3, (prediction, compiled)
    assert [d["device"] for d in prediction["devices"]] == ["cpu:0", "cpu:1"]
    assert all(d["compute_ms"] > 0 for d in prediction["devices"]), prediction  # the split: work on both
    assert prediction["critical_path"][-1].startswith("add ("), prediction
    assert prediction["choice"].endswith(": chose the split"), prediction
    # inspect prints it; with --measure it runs the artifact and sets each device's time beside it.
    shown = switchyard("inspect", art, cache=cache).stdout
    assert f"predicted by --objective latency: run {prediction['run_ms']:.3f} ms\n" in shown, shown
    assert "    critical path: parameter %x" in shown and ": chose the split" in shown, shown
    measured = switchyard("inspect", art, "--measure", "5", cache=cache).stdout
    lines = re.findall(r"    (cpu:[01]): compute [0-9.]+ ms \(measured ([0-9.]+) ms\), copies into it", measured)
    assert [device for device, _ in lines] == ["cpu:0", "cpu:1"], measured
    assert all(float(ms) > 0 for _, ms in lines), measured
    assert re.search(r"run [0-9.]+ ms \(measured [0-9.]+ ms\)", measured), measured
    # run --profile does the same on the user's inputs.
    rng = np.random.default_rng(1)
    args = []
    for name, shape in (("x", (64, 256)), ("a1", (256, 256)), ("a2", (256, 256)), ("b1", (256, 256)), ("b2", (256, 256))):
        np.save(tmp_path / f"{name}.npy", rng.standard_normal(shape).astype(np.float32))
        args += ["--input", f"{name}={tmp_path / (name + '.npy')}"]
    profiled = switchyard("run", art, *args, "-o", tmp_path / "out", "--repeat", "3", "--profile", cache=cache).stdout
    assert re.search(r"cpu:1: compute [0-9.]+ ms \(measured [0-9.]+ ms\)", profiled), profiled
    # A bytes build has no prediction to show; --measure still times each device.
    switchyard("compile", TWO_BRANCHES, "--devices", "cpu:0,cpu:1", "-o", tmp_path / "bytes", cache=cache)
    assert "prediction" not in json.loads((tmp_path / "bytes" / "manifest.json").read_text())
    plain = switchyard("inspect", tmp_path / "bytes", "--measure", "2", cache=cache).stdout
    assert "predicted" not in plain and "measured over 2 runs on made-up inputs" in plain, plain
    err = switchyard("inspect", TWO_BRANCHES, "--measure", "2", cache=cache, ok=False).stderr
    assert "--measure times an artifact" in err, err


def test_bad_objective_flags_and_cost_files_are_named(tmp_path):
    cache = tmp_path / "cache"
    common = [TWO_BRANCHES, "--devices", "cpu:0,cpu:1", "-o", tmp_path / "art"]
    err = switchyard("compile", *common, "--objective", "latency", cache=cache, ok=False).stderr
    assert "--objective latency needs --costs FILE" in err, err
    costs = profile(tmp_path)
    err = switchyard("compile", *common, "--costs", costs, cache=cache, ok=False).stderr
    assert "--costs is read only with --objective latency" in err, err
    # A cost file measured on another model lacks this model's operators.
    chain = tmp_path / "chain.sy"
    chain.write_text(CHAIN)
    err = switchyard("compile", chain, "--devices", "cpu:0,cpu:1", "-o", tmp_path / "c", "--objective", "latency",
                     "--costs", costs, cache=cache, ok=False).stderr
    assert f"cost file {costs} has no time for these operators" in err, err
    assert "exp : (Tensor[(4, 8), float32]) -> Tensor[(4, 8), float32] on cpu:0 at" in err, err
    # A cost file from another machine.
    data = json.loads(costs.read_text())
    data["machine"]["cpu_model"] = "Imaginary CPU 9000"
    other = tmp_path / "other.json"
    other.write_text(json.dumps(data))
    err = switchyard("compile", *common, "--objective", "latency", "--costs", other, cache=cache, ok=False).stderr
    assert f"cost file {other} was measured on another machine" in err, err
    assert "CPU model: measured on 'Imaginary CPU 9000'" in err, err
    # Devices the file never measured.
    err = switchyard("compile", TWO_BRANCHES, "--devices", "cpu:0,cpu:1,cpu:2", "-o", tmp_path / "d", "--objective",
                     "latency", "--costs", costs, cache=cache, ok=False).stderr
    assert "device cpu:2 (the file measured cpu:0, cpu:1)" in err, err
    err = switchyard("profile", TWO_BRANCHES, "--device", "cuda:0", "-o", tmp_path / "x.json", cache=cache,
                     ok=False).stderr
    assert "profile measures CPU devices only; --device cuda:0 is not one" in err, err
    err = switchyard("profile", TWO_BRANCHES, "--device", "cpu:0", "--cores", "cpu:0=3-1", "-o", tmp_path / "x.json",
                     cache=cache, ok=False).stderr
    assert "malformed --cores 'cpu:0=3-1'" in err, err


def test_python_build_takes_a_cost_file(tmp_path):
    import switchyard as sy
    costs = profile(tmp_path)
    equal_devices(costs)
    mod = sy.parse(TWO_BRANCHES.read_text())
    sy.build(mod, ["cpu:0", "cpu:1"], tmp_path / "art", costs=costs, cache_dir=tmp_path / "cache")
    manifest = json.loads((tmp_path / "art" / "manifest.json").read_text())
    assert {k["device"] for k in manifest["kernels"]} == {0, 1}, manifest["kernels"]
    data = json.loads(costs.read_text())
    data["machine"]["isa"] = "mmx"
    other = tmp_path / "other.json"
    other.write_text(json.dumps(data))
    try:
        sy.build(mod, ["cpu:0", "cpu:1"], tmp_path / "art2", costs=other, cache_dir=tmp_path / "cache")
    except sy.UsageError as e:
        assert "ISA: measured with 'mmx'" in str(e), str(e)
    else:
        raise AssertionError("a cost file from another machine was accepted")


def test_a_whole_model_on_one_device_is_predicted_as_the_run_it_was_measured_from(tmp_path):
    # Blocks of one shape share an operator key, whose median under-prices
    # the slower of them, and the reorders between layouts are kernels no
    # operator names: the profile scales each device's times so that the
    # whole model there is predicted as its measured run (before, 1-7 % short
    # of it, and the two towers of bench/device_queues_bench.py kept one
    # device over a split that ran faster).
    import torch
    torch.manual_seed(0)
    blocks = [torch.nn.Sequential(torch.nn.Conv2d(32, 32, 3, padding=1), torch.nn.ReLU()) for _ in range(4)]
    model = torch.nn.Sequential(*blocks).eval()
    path = tmp_path / "tower.onnx"
    torch.onnx.export(model, torch.randn(1, 32, 28, 28), str(path), input_names=["x"], output_names=["y"],
                      opset_version=13)
    costs = tmp_path / "costs.json"
    out = switchyard("profile", path, "--device", "cpu:0", "--device", "cpu:1", "--cores", "cpu:0=0", "--cores",
                     "cpu:1=1", "--repeat", "10", "-o", costs, cache=tmp_path / "cache").stdout
    data = json.loads(costs.read_text())
    predicted = switchyard("inspect", path, "--devices", "cpu:0,cpu:1", "--objective", "latency", "--costs", costs,
                           cache=tmp_path / "cache").stdout
    close = lambda a, b: abs(a - b) <= 0.002 * b + 0.001  # inspect prints three decimals
    one = float(re.search(r"one device with every core: cpu:0 with 2 threads, predicted ([\d.]+) ms", predicted).group(1))
    assert close(one, data["all_cores"]["run_ms"]), (one, data["all_cores"], out, predicted)
    # A check of a plan without hand-offs calibrates its device's times to
    # its own runs; otherwise each device's whole model is its profile run.
    # (cpu:0 alone is the all-cores candidate once that is chosen).
    if all(check["handoffs"] > 0 for check in data["split_checks"]):
        alone = {m.group(1): float(m.group(2))
                 for m in re.finditer(r"everything on (cpu:\d), wishes aside: ([\d.]+) ms", predicted)}
        runs = {m.group(1): float(m.group(2))
                for m in re.finditer(r"^(cpu:\d) \(1 threads\): .*?, run ([\d.e-]+) ms", out, re.M)}
        assert set(runs) == {"cpu:0", "cpu:1"}, out
        for device in ["cpu:1"] if "chose one device" in predicted else ["cpu:0", "cpu:1"]:
            assert close(alone[device], runs[device]), (device, alone, runs, out, predicted)
