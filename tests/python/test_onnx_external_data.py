# ONNX external data read as ONNX's own loader reads it (issue 41): `offset`
# and `length` are decimal digits only and in range ("0x30" used to read as
# 0, so the importer took another tensor's bytes and the model ran with exit
# 0), each key at most once, the span inside the file, and `location` a
# regular file inside the model's folder (no NUL byte, no directory or pipe).
import os

import numpy as np
import onnx
import pytest

import switchyard as sy
from test_onnx_import import dense_relu_model, reference


def external_model(tmp_path):
    """dense_relu_model with both initializers in ext.weights; returns (path, model, {name: entries})."""
    model = dense_relu_model()
    onnx.save(dense_relu_model(), str(tmp_path / "ext.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
              location="ext.weights", size_threshold=0)
    stored = onnx.load(str(tmp_path / "ext.onnx"), load_external_data=False)
    entries = {t.name: {e.key: e.value for e in t.external_data} for t in stored.graph.initializer}
    return tmp_path / "ext.onnx", model, entries


def tamper(tmp_path, tensor, edit):
    """Rewrites ext.onnx with `edit(external_data)` applied to `tensor`'s entries."""
    stored = onnx.load(str(tmp_path / "ext.onnx"), load_external_data=False)
    for t in stored.graph.initializer:
        if t.name == tensor:
            edit(t.external_data)
    (tmp_path / "ext.onnx").write_bytes(stored.SerializeToString())
    return tmp_path / "ext.onnx"


def set_entry(key, value):
    def edit(external_data):
        for entry in external_data:
            if entry.key == key:
                entry.value = value
                return
        entry = external_data.add()
        entry.key, entry.value = key, value
    return edit


def test_decimal_offsets_and_lengths_are_read(tmp_path):
    path, model, entries = external_model(tmp_path)
    assert int(entries["b"]["offset"]) > 0, "b follows w in the file"
    tamper(tmp_path, "b", set_entry("length", "12"))
    x = np.ones((2, 4), np.float32)
    np.testing.assert_allclose(sy.evaluate(sy.frontend.from_onnx(path), x=x), reference(model, x), rtol=1e-5)


@pytest.mark.parametrize("key, value, message", [
    # Each of these read as some number through std::stoll.
    ("offset", "HEX", r"external data offset '0x[0-9a-f]+' is not a decimal number of bytes"),
    ("offset", "+48", r"external data offset '\+48' is not a decimal number of bytes"),
    ("offset", " 48", r"external data offset ' 48' is not a decimal number of bytes"),
    ("offset", "48 bytes", r"external data offset '48 bytes' is not a decimal number of bytes"),
    ("offset", "-1", r"external data offset '-1' is not a decimal number of bytes"),
    ("offset", "4.8e1", r"external data offset '4.8e1' is not a decimal number of bytes"),
    ("offset", "", r"external data offset '' is not a decimal number of bytes"),
    ("offset", "99999999999999999999", r"external data offset '99999999999999999999' is out of range"),
    ("length", "0xc", r"external data length '0xc' is not a decimal number of bytes"),
    ("length", "13", r"external data length 13 does not match its dims \(12 bytes\)"),
    ("offset", "1000000", r"external data file .*ext\.weights is too short for 12 bytes at offset 1000000"),
])
def test_malformed_offsets_and_lengths_are_refused_naming_the_tensor(tmp_path, key, value, message):
    path, _, entries = external_model(tmp_path)
    if value == "HEX":
        value = hex(int(entries["b"]["offset"]))
    tamper(tmp_path, "b", set_entry(key, value))
    with pytest.raises(sy.ParseError, match="tensor 'b': " + message):
        sy.frontend.from_onnx(path)


def test_a_key_given_twice_is_refused(tmp_path):
    path, _, entries = external_model(tmp_path)

    def add_offset(external_data):
        entry = external_data.add()
        entry.key, entry.value = "offset", "0"
    tamper(tmp_path, "b", add_offset)
    with pytest.raises(sy.ParseError, match="tensor 'b': external data offset is given twice"):
        sy.frontend.from_onnx(path)


def test_a_location_must_be_a_regular_file_inside_the_folder(tmp_path):
    path, _, _ = external_model(tmp_path)
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "pipe")
    cases = {
        "folder": r"external data .*folder: is a directory, not a regular file",
        "pipe": r"external data .*pipe: is a pipe, not a regular file",  # refused without waiting for a writer
        "ext.weights\0/../../etc/passwd":
            r"external data location 'ext\.weights\\x00/\.\./\.\./etc/passwd' holds a NUL byte",
    }
    for location, message in cases.items():
        tamper(tmp_path, "w", set_entry("location", location))
        with pytest.raises(sy.ParseError, match="tensor 'w': " + message):
            sy.frontend.from_onnx(path)
