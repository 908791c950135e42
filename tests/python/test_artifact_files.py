# How the tools open an artifact's files (issue 41). Every command that opens
# one (inspect, run, the Python and C APIs) reads only regular files: a
# manifest.json linked to /dev/zero made `switchyard inspect` grow without
# bound and a FIFO made it wait forever. And every size a file implies is
# checked before the file is hashed or mapped: weights.bin must be exactly as
# long as the manifest's weights reach (a sparse 8 GiB tail took 17 s and
# 8.4 GB before the hash mismatch), model.so at most a limit the user can raise.
import os
import pathlib
import resource
import shutil
import subprocess

import numpy as np
import pytest

import switchyard as sy

REPO = pathlib.Path(__file__).resolve().parents[2]
SWITCHYARD = pathlib.Path(os.environ.get("SY_BUILD_DIR", REPO / "build")) / "bin" / "switchyard"
MODEL = "def @main(%x: Tensor[(4), float32]) {\n  add(%x, Tensor[(4), float32]{1, 2, 3, 4})\n}\n"
X = np.array([1, -2, 3, -4], np.float32)


@pytest.fixture(scope="module")
def artifact(tmp_path_factory):
    out = tmp_path_factory.mktemp("files") / "model"
    sy.build(sy.parse(MODEL), devices=["cpu:0"], output=out)
    return out


@pytest.fixture
def copy(artifact, tmp_path):
    return pathlib.Path(shutil.copytree(artifact, tmp_path / "copy"))


def built_with_address_sanitizer():
    # ASan reserves terabytes of shadow address space at start: a bound on
    # the address space stops it before main (scripts/sanitize.sh's build).
    with open(SWITCHYARD, "rb") as binary:
        return b"libasan.so" in binary.read()


ADDRESS_SPACE_BOUND = None if built_with_address_sanitizer() else 4 << 30


def bounded():
    # Should a command read without bound again, it fails here instead of
    # taking the machine (under ASan only the timeout bounds it).
    if ADDRESS_SPACE_BOUND:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_BOUND, ADDRESS_SPACE_BOUND))


def cli(*args):
    return subprocess.run([str(SWITCHYARD), *map(str, args)], capture_output=True, text=True, timeout=120,
                          preexec_fn=bounded)


def replace_with(path, kind):
    path.unlink()
    if kind == "pipe":
        os.mkfifo(path)
        return "a pipe"
    path.symlink_to("/dev/zero")
    return "a character device"


@pytest.mark.parametrize("kind", ["pipe", "/dev/zero"])
@pytest.mark.parametrize("name", ["manifest.json", "model.so", "weights.bin"])
def test_a_file_that_is_not_regular_is_refused_at_once(copy, tmp_path, name, kind):
    what = replace_with(copy / name, kind)
    message = f"{copy / name}: is {what}, not a regular file"
    with pytest.raises(sy.RuntimeError, match=message):
        sy.runtime.load(copy)
    np.save(tmp_path / "x.npy", X)
    ran = cli("run", copy, "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", tmp_path / "out")
    assert ran.returncode == 1 and message in ran.stderr, ran.stderr
    inspected = cli("inspect", copy)
    if name == "manifest.json":
        assert inspected.returncode == 1 and message in inspected.stderr, inspected.stderr
    else:  # inspect reads only the manifest
        assert inspected.returncode == 0, inspected.stderr


def test_weights_longer_than_the_manifest_says_are_refused_before_hashing(copy):
    weights = copy / "weights.bin"
    size = weights.stat().st_size
    os.truncate(weights, size + (64 << 20))  # sparse: no disk used
    with pytest.raises(sy.RuntimeError, match=f"weights.bin has {size + (64 << 20)} bytes, but the manifest's "
                                              f"weights end at byte {size}"):
        sy.runtime.load(copy)
    os.truncate(weights, size - 1)
    with pytest.raises(sy.RuntimeError, match=f"weights.bin is truncated: it has {size - 1} bytes"):
        sy.runtime.load(copy)


def test_a_model_so_over_the_limit_is_refused_before_hashing(copy, tmp_path):
    library = copy / "model.so"
    size = library.stat().st_size
    with pytest.raises(sy.RuntimeError, match=rf"model\.so: {size} bytes, more than the limit on model\.so "
                                              rf"\(LoadOptions::max_model_bytes, switchyard run --max-model-bytes\) "
                                              rf"\({size - 1} bytes\)"):
        sy.runtime.load(copy, max_model_bytes=size - 1)
    np.testing.assert_array_equal(sy.runtime.load(copy, max_model_bytes=size).run(x=X), X + [1, 2, 3, 4])
    np.save(tmp_path / "x.npy", X)
    refused = cli("run", copy, "--input", f"x={tmp_path / 'x.npy'}", "--max-model-bytes", size - 1)
    assert refused.returncode == 1 and f"model.so: {size} bytes, more than the limit" in refused.stderr
    assert cli("run", copy, "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", tmp_path / "out").returncode == 0
    # A sparse gigabyte past the default limit is refused without reading it.
    os.truncate(library, (1 << 30) + 1)
    with pytest.raises(sy.RuntimeError, match=rf"model\.so: {(1 << 30) + 1} bytes, more than the limit"):
        sy.runtime.load(copy)
