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
