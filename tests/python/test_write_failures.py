# A compile whose writes fail part-way (a full disk; here the file-size
# limit, which fails write() with EFBIG as a full disk fails it with ENOSPC)
# says which file and why, exits non-zero, and leaves no partial artifact or
# cache temporaries; an older artifact in the output directory stays whole.
import os
import pathlib
import resource
import signal
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SWITCHYARD = pathlib.Path(os.environ.get("SY_BUILD_DIR", REPO / "build")) / "bin" / "switchyard"
MODEL = REPO / "tests" / "data" / "mlp_two_devices.sy"


def compile_model(cache, output, file_size_limit=None):
    def limit_file_size():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # so write() fails instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    env = dict(os.environ, XDG_CACHE_HOME=str(cache))
    return subprocess.run([str(SWITCHYARD), "compile", str(MODEL), "--devices", "cpu:0,cpu:1", "-o", str(output)],
                          capture_output=True, text=True, env=env, timeout=300,
                          preexec_fn=limit_file_size if file_size_limit else None)


def leftovers(directory):
    return [p for p in directory.rglob("*") if ".tmp" in p.name or ".building" in p.name]


@pytest.mark.parametrize("limit", [2_000, 12_000])
def test_a_failed_write_names_the_file_and_the_reason_and_leaves_nothing(tmp_path, limit):
    output = tmp_path / "model.art"
    older = compile_model(tmp_path / "first-cache", output)
    assert older.returncode == 0, older.stderr
    manifest = (output / "manifest.json").read_bytes()

    cache = tmp_path / "cache"
    result = compile_model(cache, output, file_size_limit=limit)
    assert result.returncode != 0, f"a {limit}-byte file limit should stop this compile"
    assert "File too large" in result.stderr, result.stderr
    assert str(cache) in result.stderr or str(output) in result.stderr, result.stderr
    assert leftovers(cache) == [] and leftovers(tmp_path / "first-cache") == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "first-cache", "model.art"]
    assert (output / "manifest.json").read_bytes() == manifest, "the older artifact stays as it was"


def test_an_output_under_a_file_is_a_clear_error(tmp_path):
    plain = tmp_path / "plain"
    plain.write_text("not a directory")
    result = compile_model(tmp_path / "cache", plain / "model.art")
    assert result.returncode != 0
    assert f"cannot create {plain}/" in result.stderr and "Not a directory" in result.stderr, result.stderr
    assert plain.read_text() == "not a directory"


def test_a_read_only_output_directory_is_a_clear_error(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("running as root, which writes into read-only directories")
    parent = tmp_path / "read-only"
    parent.mkdir()
    parent.chmod(0o555)
    try:
        result = compile_model(tmp_path / "cache", parent / "model.art")
    finally:
        parent.chmod(0o755)
    assert result.returncode != 0
    assert str(parent) in result.stderr and "Permission denied" in result.stderr, result.stderr
    assert list(parent.iterdir()) == []
