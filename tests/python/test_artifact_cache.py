# The artifact cache seen from the command line: compiling an unchanged
# model again with the same flags hands back the same artifact without
# compiling; a changed model, other flags, another oneDNN instruction set,
# --rebuild, --emit-source, a cached file edited since, or an ONNX model
# with external data compile.
import json
import os
import shutil
import subprocess
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from mlp_cli import MODEL, SWITCHYARD, run_model

CACHED = "from the artifact cache, nothing compiled"


def compile_model(cache, model, output, *flags, environment=None):
    env = dict(os.environ, XDG_CACHE_HOME=str(cache), **(environment or {}))
    result = subprocess.run([str(SWITCHYARD), "compile", str(model), "-o", str(output), *flags],
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def files_of(artifact):
    return {p.relative_to(artifact): p.read_bytes() for p in artifact.rglob("*") if p.is_file()}


def test_an_unchanged_compile_is_handed_back_and_runs_the_same(tmp_path):
    cache = tmp_path / "cache"
    first = compile_model(cache, MODEL, tmp_path / "first", "--devices", "cpu:0,cpu:1")
    assert CACHED not in first
    second = compile_model(cache, MODEL, tmp_path / "second", "--devices", "cpu:0,cpu:1", "--time")
    assert CACHED in second, second
    assert "artifact cache" in second  # --time's one stage
    # The summary names the artifact as the compile did, without its compiles.
    assert first.split(";")[0].split(": ", 1)[1] == second.split(";")[0].split(": ", 1)[1]
    assert files_of(tmp_path / "first") == files_of(tmp_path / "second")
    np.testing.assert_array_equal(run_model(tmp_path / "second", tmp_path), run_model(tmp_path / "first", tmp_path))


def test_other_flags_another_model_rebuild_and_emit_source_compile(tmp_path):
    cache = tmp_path / "cache"
    compile_model(cache, MODEL, tmp_path / "a", "--devices", "cpu:0,cpu:1")
    assert CACHED not in compile_model(cache, MODEL, tmp_path / "b", "--devices", "cpu:0,cpu:1", "--default", "cpu:1")
    assert CACHED not in compile_model(cache, MODEL, tmp_path / "c", "--devices", "cpu:0,cpu:1", "--opt-level", "1")
    assert CACHED not in compile_model(cache, MODEL, tmp_path / "d", "--devices", "cpu:0,cpu:1", "--rebuild")
    emitted = compile_model(cache, MODEL, tmp_path / "e", "--devices", "cpu:0,cpu:1", "--emit-source")
    assert CACHED not in emitted and (tmp_path / "e" / "src").is_dir()
    # The same text with one more comment line is another file.
    changed = tmp_path / "changed.sy"
    changed.write_text(MODEL.read_text() + "\n# one more line\n")
    assert CACHED not in compile_model(cache, changed, tmp_path / "f", "--devices", "cpu:0,cpu:1")
    assert CACHED in compile_model(cache, changed, tmp_path / "g", "--devices", "cpu:0,cpu:1")


def test_a_cached_file_edited_since_is_not_handed_back(tmp_path):
    cache = tmp_path / "cache"
    compile_model(cache, MODEL, tmp_path / "first", "--devices", "cpu:0,cpu:1")
    expected = run_model(tmp_path / "first", tmp_path)
    # The artifact shares its files with the cache entry: editing one in place
    # edits both (here a space after the manifest's JSON, which still loads).
    with open(tmp_path / "first" / "manifest.json", "a") as f:
        f.write(" ")
    np.testing.assert_array_equal(run_model(tmp_path / "first", tmp_path), expected)
    again = compile_model(cache, MODEL, tmp_path / "second", "--devices", "cpu:0,cpu:1")
    assert CACHED not in again, again
    np.testing.assert_array_equal(run_model(tmp_path / "second", tmp_path), expected)
    assert CACHED in compile_model(cache, MODEL, tmp_path / "third", "--devices", "cpu:0,cpu:1")


def matmul_model():
    w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_an_onnx_model_with_external_data_is_compiled_every_time(tmp_path):
    onnx.save(matmul_model(), str(tmp_path / "ext.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
              location="ext.weights", size_threshold=0)
    cache = tmp_path / "cache"
    compile_model(cache, tmp_path / "ext.onnx", tmp_path / "a")
    # Its weights live in ext.weights, which the cache's key does not read.
    assert CACHED not in compile_model(cache, tmp_path / "ext.onnx", tmp_path / "b")
    onnx.save(matmul_model(), str(tmp_path / "inline.onnx"))
    compile_model(cache, tmp_path / "inline.onnx", tmp_path / "c")
    assert CACHED in compile_model(cache, tmp_path / "inline.onnx", tmp_path / "d")


def run_matmul(artifact, tmp_path):
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / f"out_{artifact.name}"
    result = subprocess.run([str(SWITCHYARD), "run", str(artifact), "--input", f"x={tmp_path / 'x.npy'}",
                             "--output-dir", str(out)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return np.load(next(out.glob("*.npy")))


def test_a_model_rewritten_in_place_with_its_size_and_time_kept_is_compiled_again(tmp_path):
    # The key's digest of the model is remembered by the file's identity
    # (inode, size, times), recorded only once the file has settled; a
    # rewrite moves its change time even when the modification time is put back.
    model = tmp_path / "mm.onnx"
    onnx.save(matmul_model(), str(model))
    time.sleep(3.2)  # older than file_digest_memo.h's kSettledNanoseconds
    cache = tmp_path / "cache"
    assert CACHED not in compile_model(cache, model, tmp_path / "a")
    records = list((cache / "switchyard" / "digests").iterdir())
    assert len(records) == 1, records
    assert CACHED in compile_model(cache, model, tmp_path / "b")
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    np.testing.assert_allclose(run_matmul(tmp_path / "b", tmp_path), x @ np.arange(12, dtype=np.float32).reshape(4, 3))

    changed = matmul_model()
    changed.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.full((4, 3), 2, dtype=np.float32), "w"))
    stat = model.stat()
    with open(model, "r+b") as f:  # in place: the same inode
        f.write(changed.SerializeToString())
    os.utime(model, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert model.stat().st_size == stat.st_size and model.stat().st_mtime_ns == stat.st_mtime_ns
    assert model.stat().st_ino == stat.st_ino
    assert CACHED not in compile_model(cache, model, tmp_path / "c")
    np.testing.assert_allclose(run_matmul(tmp_path / "c", tmp_path), x @ np.full((4, 3), 2, dtype=np.float32))


def test_a_cached_compile_takes_the_model_digest_from_its_record(tmp_path):
    # What makes a cached compile of a large model cheap: the file is not
    # read while its record matches it. A record with another digest (made
    # here by hand) is another key, so a miss; the file itself is unchanged.
    model = tmp_path / "mm.onnx"
    onnx.save(matmul_model(), str(model))
    time.sleep(3.2)
    cache = tmp_path / "cache"
    compile_model(cache, model, tmp_path / "a")
    assert CACHED in compile_model(cache, model, tmp_path / "b")
    (record,) = (cache / "switchyard" / "digests").iterdir()
    text = record.read_text()
    digest = text.split()[-1]
    record.write_text(text.replace(digest, "0" * 32))
    assert CACHED not in compile_model(cache, model, tmp_path / "c")
    record.write_text(text)
    assert CACHED in compile_model(cache, model, tmp_path / "d")


def test_a_large_model_changed_in_either_half_is_compiled_again(tmp_path):
    # Above 64 MiB the cache sums a file's two halves on two threads: a
    # change in either half must still be another model.
    rows, columns = 4096, 4200  # 68.8 MB of float32 weights
    weights = np.random.default_rng(0).standard_normal((rows, columns)).astype(np.float32)
    x = np.random.default_rng(1).standard_normal((1, rows)).astype(np.float32)
    cache = tmp_path / "cache"

    def compile_and_run(w, name):
        graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, rows])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, columns])],
                                  [numpy_helper.from_array(w, "w")])
        model = tmp_path / "large.onnx"
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(model))
        assert model.stat().st_size > 64 << 20
        summary = compile_model(cache, model, tmp_path / name)
        np.save(tmp_path / "x.npy", x)
        out = tmp_path / f"out_{name}"
        result = subprocess.run([str(SWITCHYARD), "run", str(tmp_path / name), "--input", f"x={tmp_path / 'x.npy'}",
                                 "--output-dir", str(out)], capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        np.testing.assert_allclose(np.load(next(out.glob("*.npy"))), x @ w, rtol=1e-4, atol=1e-3)
        return summary

    assert CACHED not in compile_and_run(weights, "a")
    assert CACHED in compile_and_run(weights, "b")
    for row in (0, rows - 1):  # the first and the last bytes of the weights
        changed = weights.copy()
        changed[row, row % columns] += 1
        assert CACHED not in compile_and_run(changed, f"row{row}")


def test_a_large_weights_file_is_checked_by_its_identity_and_by_every_load(tmp_path):
    # Above 64 MiB, weights.bin is not read when handed back: its size,
    # inode and modification time are checked, and the manifest (hashed)
    # pins its checksum, which every load checks. So an edit in place is a
    # miss, and one whose time was put back is refused by the load.
    rows, columns = 4096, 4200
    w = np.random.default_rng(0).standard_normal((rows, columns)).astype(np.float32)
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, rows])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, columns])],
                              [numpy_helper.from_array(w, "w")])
    model = tmp_path / "large.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(model))
    cache = tmp_path / "cache"
    compile_model(cache, model, tmp_path / "a")
    weights = tmp_path / "a" / "weights.bin"
    assert weights.stat().st_size > 64 << 20 and weights.stat().st_nlink == 2  # shared with the entry
    np.save(tmp_path / "x.npy", np.ones((1, rows), dtype=np.float32))

    def load(artifact):
        return subprocess.run([str(SWITCHYARD), "run", str(artifact), "--input", f"x={tmp_path / 'x.npy'}",
                               "--output-dir", str(tmp_path / f"out_{artifact.name}")],
                              capture_output=True, text=True, timeout=300)

    def flip_a_byte(keep_time):
        stat = weights.stat()
        with open(weights, "r+b") as f:
            f.seek(stat.st_size // 3)
            byte = f.read(1)
            f.seek(stat.st_size // 3)
            f.write(bytes([byte[0] ^ 0x10]))
        if keep_time:
            os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))

    flip_a_byte(keep_time=False)
    assert CACHED not in compile_model(cache, model, tmp_path / "b")
    assert load(tmp_path / "b").returncode == 0
    weights = tmp_path / "b" / "weights.bin"
    assert CACHED in compile_model(cache, model, tmp_path / "c")
    flip_a_byte(keep_time=True)
    assert CACHED in compile_model(cache, model, tmp_path / "d")
    refused = load(tmp_path / "d")
    assert refused.returncode != 0 and "weights.bin" in refused.stderr and "does not match" in refused.stderr, \
        refused.stderr
    assert CACHED not in compile_model(cache, model, tmp_path / "e", "--rebuild")
    assert load(tmp_path / "e").returncode == 0


def test_a_kept_artifact_a_killed_compile_left_half_written_is_removed(tmp_path):
    # A folder named as keep() names its temporary, by a process that has
    # exited, and older than the ten minutes that spare a writer on another
    # machine: the next compile's cache removes it, and a live one's stays.
    cache = tmp_path / "cache"
    compile_model(cache, MODEL, tmp_path / "first", "--devices", "cpu:0,cpu:1")
    exited = subprocess.Popen(["true"])
    exited.wait()
    artifacts = cache / "switchyard" / "artifacts"
    orphan = artifacts / f"0123.tmp-{exited.pid}-0"
    live = artifacts / f"4567.tmp-{os.getpid()}-0"
    for folder in (orphan, live):
        (folder / "model.so").parent.mkdir(parents=True)
        (folder / "model.so").write_bytes(b"half")
        os.utime(folder, (0, 0))
    assert CACHED in compile_model(cache, MODEL, tmp_path / "second", "--devices", "cpu:0,cpu:1")
    assert not orphan.exists()
    assert live.exists()


def test_a_compile_for_another_onednn_instruction_set_is_not_handed_back(tmp_path):
    # Layout planning follows the instruction set oneDNN dispatches to, which
    # ONEDNN_MAX_CPU_ISA lowers: capped at AVX2, activations between the two
    # convolutions are in 8-channel blocks on any machine, also after an
    # uncapped compile of the same model (channels last on AVX-512).
    model = tmp_path / "convs.sy"
    model.write_text("def @main(%x: Tensor[(1, 8, 10, 10), float32], %w: Tensor[(8, 8, 3, 3), float32])\n"
                     "    -> Tensor[(1, 8, 10, 10), float32] {\n"
                     "  %0 = nn.relu(nn.conv2d(%x, %w, padding=[1, 1]));\n"
                     "  nn.softmax(nn.conv2d(%0, %w, padding=[1, 1]), axis=1)\n"
                     "}\n")
    cache = tmp_path / "cache"
    compile_model(cache, model, tmp_path / "native", "--devices", "cpu:0")
    compile_model(cache, model, tmp_path / "avx2", "--devices", "cpu:0", environment={"ONEDNN_MAX_CPU_ISA": "AVX2"})
    manifest = json.loads((tmp_path / "avx2" / "manifest.json").read_text())
    formats = {p["dst"].get("format") for p in manifest["primitives"] if p["kind"] == "convolution"}
    assert "nChw8c" in formats, manifest["primitives"]


def entry_of(cache):
    """The one artifact entry folder of `cache`."""
    entries = [p for p in (cache / "switchyard" / "artifacts").iterdir() if p.is_dir()]
    assert len(entries) == 1, entries
    return entries[0]


def test_a_cache_list_naming_a_file_outside_its_entry_is_refused(tmp_path):
    # An entry's list names the files to hand back; a name with a '/' or '..'
    # would link a file from outside the entry to outside the -o folder. Here
    # the list's manifest line names "../escaped.json", a copy of the manifest
    # with the same bytes and times, so nothing but its name is wrong.
    cache = tmp_path / "cache"
    compile_model(cache, MODEL, tmp_path / "first", "--devices", "cpu:0,cpu:1")
    expected = run_model(tmp_path / "first", tmp_path)
    entry = entry_of(cache)
    escaped = entry.parent / "escaped.json"
    escaped.write_bytes((entry / "manifest.json").read_bytes())
    stat = (entry / "manifest.json").stat()
    os.utime(escaped, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    lines = (entry / ".files").read_text().splitlines(keepends=True)
    lines = [("../escaped.json" + line[len("manifest.json"):]) if line.startswith("manifest.json\t") else line
             for line in lines]
    (entry / ".files").write_text("".join(lines))
    out = tmp_path / "outputs" / "second"
    again = compile_model(cache, MODEL, out, "--devices", "cpu:0,cpu:1")
    assert CACHED not in again, again
    assert sorted(p.name for p in out.parent.iterdir()) == ["second"]
    np.testing.assert_array_equal(run_model(out, tmp_path), expected)
    assert CACHED in compile_model(cache, MODEL, tmp_path / "third", "--devices", "cpu:0,cpu:1")


def test_a_bit_flip_that_keeps_size_and_time_is_not_handed_back(tmp_path):
    cache = tmp_path / "cache"
    compile_model(cache, MODEL, tmp_path / "first", "--devices", "cpu:0,cpu:1")
    expected = run_model(tmp_path / "first", tmp_path)
    kept = entry_of(cache) / "model.so"
    stat = kept.stat()
    data = bytearray(kept.read_bytes())
    data[len(data) // 2] ^= 0x10
    kept.write_bytes(bytes(data))
    os.utime(kept, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert kept.stat().st_size == stat.st_size and kept.stat().st_mtime_ns == stat.st_mtime_ns
    again = compile_model(cache, MODEL, tmp_path / "second", "--devices", "cpu:0,cpu:1")
    assert CACHED not in again, again
    np.testing.assert_array_equal(run_model(tmp_path / "second", tmp_path), expected)
    assert CACHED in compile_model(cache, MODEL, tmp_path / "third", "--devices", "cpu:0,cpu:1")


def test_a_file_where_an_entry_should_be_is_replaced(tmp_path):
    cache = tmp_path / "cache"
    compile_model(cache, MODEL, tmp_path / "first", "--devices", "cpu:0,cpu:1")
    entry = entry_of(cache)
    shutil.rmtree(entry)
    entry.write_text("not an entry")
    assert CACHED not in compile_model(cache, MODEL, tmp_path / "second", "--devices", "cpu:0,cpu:1")
    assert CACHED in compile_model(cache, MODEL, tmp_path / "third", "--devices", "cpu:0,cpu:1")


def entries(cache):
    folder = cache / "switchyard" / "artifacts"
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and len(p.name) == 64)


def entry_bytes(cache, name):
    return sum(f.stat().st_size for f in (cache / "switchyard" / "artifacts" / name).iterdir() if f.is_file())


def test_the_cache_keeps_to_its_budget_least_recently_used_first(tmp_path):
    cache = tmp_path / "cache"
    flags = [["--devices", "cpu:0,cpu:1"], ["--devices", "cpu:0,cpu:1", "--default", "cpu:1"],
             ["--devices", "cpu:0,cpu:1", "--opt-level", "1"]]
    compile_model(cache, MODEL, tmp_path / "a", *flags[0])
    [a] = entries(cache)
    compile_model(cache, MODEL, tmp_path / "b", *flags[1])
    [b] = [e for e in entries(cache) if e != a]
    # Room for two of these entries, not three.
    budget = str(entry_bytes(cache, a) + entry_bytes(cache, b) + 64)
    time.sleep(0.05)
    # Using a makes b the least recently used.
    assert CACHED in compile_model(cache, MODEL, tmp_path / "a2", *flags[0],
                                   environment={"SY_ARTIFACT_CACHE_MAX": budget})
    third = compile_model(cache, MODEL, tmp_path / "c", *flags[2], environment={"SY_ARTIFACT_CACHE_MAX": budget})
    assert CACHED not in third
    kept = entries(cache)
    assert a in kept and b not in kept and len(kept) == 2, kept
    # The evicted flags compile again; the artifacts still run alike.
    assert CACHED not in compile_model(cache, MODEL, tmp_path / "b2", *flags[1],
                                       environment={"SY_ARTIFACT_CACHE_MAX": budget})
    np.testing.assert_array_equal(run_model(tmp_path / "b2", tmp_path), run_model(tmp_path / "a2", tmp_path))


def test_a_zero_budget_keeps_nothing_and_a_malformed_one_is_refused(tmp_path):
    cache = tmp_path / "cache"
    compile_model(cache, MODEL, tmp_path / "a", "--devices", "cpu:0,cpu:1", environment={"SY_ARTIFACT_CACHE_MAX": "0"})
    assert not (cache / "switchyard" / "artifacts").exists() or entries(cache) == []
    env = dict(os.environ, XDG_CACHE_HOME=str(cache), SY_ARTIFACT_CACHE_MAX="lots")
    result = subprocess.run([str(SWITCHYARD), "compile", str(MODEL), "-o", str(tmp_path / "b"), "--devices", "cpu:0,cpu:1"],
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode != 0
    assert "SY_ARTIFACT_CACHE_MAX='lots' is not a size" in result.stderr, result.stderr
    assert not (tmp_path / "b").exists()
