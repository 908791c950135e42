# The verified kernel cache seen from the command line: a corrupted cached
# object is rebuilt, said so on stderr, and never linked into the artifact.
import os
import subprocess

import numpy as np

from mlp_cli import MODEL, SWITCHYARD, run_model


def compile_model(cache, output):
    env = dict(os.environ, XDG_CACHE_HOME=str(cache))
    # --rebuild: the artifact cache would hand back the first artifact without a look at the objects.
    return subprocess.run([str(SWITCHYARD), "compile", str(MODEL), "--devices", "cpu:0,cpu:1", "--rebuild",
                           "-o", str(output)], capture_output=True, text=True, env=env, timeout=300)


def test_a_corrupted_cached_object_is_rebuilt_and_said_so(tmp_path):
    cache = tmp_path / "cache"
    first = compile_model(cache, tmp_path / "first")
    assert first.returncode == 0, first.stderr
    objects = [p for p in (cache / "switchyard" / "objects").iterdir() if p.suffix == ".o"]
    assert objects, "the build cached its objects"
    for obj in objects:
        obj.write_bytes(obj.read_bytes()[: len(obj.read_bytes()) // 2])
    second = compile_model(cache, tmp_path / "second")
    assert second.returncode == 0, second.stderr
    assert second.stderr.count("note: rebuilt the cached object") == len(objects), second.stderr
    np.testing.assert_array_equal(run_model(tmp_path / "second", tmp_path), run_model(tmp_path / "first", tmp_path))


def test_a_directory_where_a_cached_entry_should_be_is_replaced(tmp_path):
    # A non-empty directory in an object's or a linked model's place (left by
    # a crash, a copy, a user) is removed and the entry rebuilt: it used to
    # fail every later compile with "cannot rename ... Is a directory".
    cache = tmp_path / "cache"
    first = compile_model(cache, tmp_path / "first")
    assert first.returncode == 0, first.stderr
    entries = [p for sub in ("objects", "models") for p in (cache / "switchyard" / sub).iterdir()
               if p.suffix in (".o", ".so")]
    assert any(p.suffix == ".o" for p in entries) and any(p.suffix == ".so" for p in entries), entries
    for entry in entries:
        entry.unlink()
        (entry / "inside").mkdir(parents=True)
    second = compile_model(cache, tmp_path / "second")
    assert second.returncode == 0, second.stderr
    assert all(entry.is_file() for entry in entries)
    np.testing.assert_array_equal(run_model(tmp_path / "second", tmp_path), run_model(tmp_path / "first", tmp_path))
