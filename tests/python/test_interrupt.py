# Interrupted and concurrent compiles and runs (issue: hardening). A compile stopped
# by a signal stops its compiler processes, removes its staging directory
# and temporary cache files, leaves any old artifact as it was and exits
# 128 + the signal; compiles into one output directory at the same time all
# succeed, the last one's artifact staying. A run stopped by a signal exits
# 128 + the signal too, having written no output.
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SWITCHYARD = pathlib.Path(os.environ.get("SY_BUILD_DIR", REPO / "build")) / "bin" / "switchyard"
MODEL = REPO / "examples" / "mlp.sy"


def slow_compiler(tmp_path):
    """A C++ compiler that waits a minute before each compile (not before the
    version and target queries), so a test can interrupt it mid-compile."""
    marker = tmp_path / "slow-compile-started"
    script = tmp_path / "slow-cxx"
    script.write_text("#!/bin/sh\n"
                      "case \" $* \" in *\" -c \"*) touch '%s'; sleep 60;; esac\n"
                      "exec c++ \"$@\"\n" % marker)
    script.chmod(0o755)
    return script, marker


def processes_mentioning(text):
    found = []
    for proc in pathlib.Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if text in (proc / "cmdline").read_bytes().decode(errors="replace"):
                found.append(int(proc.name))
        except OSError:
            pass
    return found


@pytest.mark.parametrize("signo", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_compile_and_leaves_nothing_behind(tmp_path, signo):
    cxx, started = slow_compiler(tmp_path)
    cache = tmp_path / "cache"
    out = tmp_path / "art"
    env = dict(os.environ, SY_CXX=str(cxx), XDG_CACHE_HOME=str(cache))
    child = subprocess.Popen([str(SWITCHYARD), "compile", str(MODEL), "--devices", "cpu:0,cpu:1", "-o", str(out)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not started.exists():
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "the compiler never started"
        time.sleep(0.05)
    child.send_signal(signo)
    _, stderr = child.communicate(timeout=30)
    assert child.returncode == 128 + signo, stderr
    assert f"compile interrupted by {signal.Signals(signo).name}: no artifact was written" in stderr
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".art.")] == []
    assert [p for p in cache.rglob("*") if ".tmp-" in p.name] == []
    deadline = time.monotonic() + 10
    while processes_mentioning(str(cxx)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_mentioning(str(cxx)) == [], "a compiler outlived the interrupted compile"


def test_an_interrupted_recompile_keeps_the_old_artifact(tmp_path):
    out = tmp_path / "art"
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    subprocess.run([str(SWITCHYARD), "compile", str(MODEL), "--devices", "cpu:0,cpu:1", "-o", str(out)], env=env, check=True,
                   capture_output=True)
    before = (out / "manifest.json").read_bytes()
    cxx, started = slow_compiler(tmp_path)
    other = tmp_path / "other.sy"
    other.write_text(MODEL.read_text().replace("nn.softmax(%8)", "nn.relu(nn.softmax(%8))"))
    child = subprocess.Popen([str(SWITCHYARD), "compile", str(other), "--devices", "cpu:0,cpu:1", "-o", str(out)],
                             env=dict(env, SY_CXX=str(cxx)), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not started.exists():
        assert child.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    child.send_signal(signal.SIGTERM)
    child.communicate(timeout=30)
    assert child.returncode == 128 + signal.SIGTERM
    assert (out / "manifest.json").read_bytes() == before


def test_concurrent_compiles_into_one_directory_all_succeed(tmp_path):
    out = tmp_path / "art"
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    command = [str(SWITCHYARD), "compile", str(MODEL), "--devices", "cpu:0,cpu:1", "-o", str(out)]
    subprocess.run(command, env=env, check=True, capture_output=True)  # fills the kernel cache
    children = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(12)]
    for child in children:
        _, stderr = child.communicate(timeout=120)
        assert child.returncode == 0, stderr
    assert (out / "manifest.json").is_file() and (out / "model.so").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["art", "cache"]
    run = subprocess.run([str(SWITCHYARD), "inspect", str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("signo", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_a_run_before_it_writes_any_output(tmp_path, mlp_artifact, mlp_inputs, signo):
    import numpy as np
    _, artifact = mlp_artifact
    flags = []
    for name, value in mlp_inputs.items():
        np.save(tmp_path / f"{name}.npy", value)
        flags += ["--input", f"{name}={tmp_path / name}.npy"]
    out = tmp_path / "out"
    child = subprocess.Popen([str(SWITCHYARD), "run", str(artifact), *flags, "-o", str(out), "--repeat", "1000000"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)  # loaded and running: a million runs take minutes
    assert child.poll() is None, child.communicate()
    child.send_signal(signo)
    stdout, stderr = child.communicate(timeout=30)
    assert child.returncode == 128 + signo, stderr
    assert f"run interrupted by {signal.Signals(signo).name}: no output was written" in stderr
    assert "latency_ms" not in stdout
    assert not out.exists()


def test_a_later_compile_removes_the_staging_folder_of_a_killed_one(tmp_path):
    # SIGKILL cannot be handled: the killed compile leaves its staging folder
    # (.art.building-PID-N), which the next compile into the same folder
    # removes, its writer being gone. A folder named for a live process stays.
    cxx, started = slow_compiler(tmp_path)
    out = tmp_path / "outputs" / "art"
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    child = subprocess.Popen([str(SWITCHYARD), "compile", str(MODEL), "--devices", "cpu:0,cpu:1", "-o", str(out)],
                             env=dict(env, SY_CXX=str(cxx)), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not started.exists():
        assert child.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    child.kill()
    child.communicate(timeout=30)
    for compiler in processes_mentioning(str(cxx)):  # each leads its own process group
        os.killpg(compiler, signal.SIGKILL)
    left = [p.name for p in out.parent.iterdir() if p.name.startswith(f".art.building-{child.pid}-")]
    assert left, "the killed compile left no staging folder to clean"
    live = out.parent / f".art.building-{os.getpid()}-0"
    (live / "weights.bin").parent.mkdir()
    (live / "weights.bin").write_bytes(b"being written")
    subprocess.run([str(SWITCHYARD), "compile", str(MODEL), "--devices", "cpu:0,cpu:1", "-o", str(out)], env=env,
                   check=True, capture_output=True)
    assert sorted(p.name for p in out.parent.iterdir()) == sorted(["art", live.name])
