# Artifacts that cannot lie (issue: hardening). model.so carries a
# description of the manifest it was built for; a real compiled artifact whose
# manifest.json is edited in any way the model would trust (an arena shrunk,
# an output reshaped or retyped, inputs reordered, weights' names swapped, a
# device changed, the format version bumped) is refused with a message naming
# the field, and the untouched artifact still runs. The description covers
# every field of the manifest but model.so's own hash (which the loader checks
# against model.so's bytes), weights.bin's checksum included: another model's
# weights.bin, with that checksum edited in, is refused too.
import ctypes
import json
import re
import shutil

import numpy as np
import pytest

import switchyard as sy

# Two inputs, two weights of one shape (so swapping their names keeps every
# size valid) and two devices, so every kind of field is present.
MODEL = """
def @main(%a: Tensor[(2, 3), float32] @cpu:0, %b: Tensor[(2, 3), float32] @cpu:0) {
  %0 = multiply(%a, Tensor[(2, 3), float32]{1, 2, 3, 4, 5, 6});
  %1 = add(%0, multiply(%b, Tensor[(2, 3), float32]{-1, 0.5, 2, -3, 0.25, 1}));
  %2 = on_device(nn.relu(%1), device="cpu:1");
  negative(%2)
}
"""

A = np.array([[1, -2, 3], [0.5, 4, -1]], np.float32)
B = np.array([[2, 2, -1], [1, -0.5, 3]], np.float32)
W1 = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
W2 = np.array([[-1, 0.5, 2], [-3, 0.25, 1]], np.float32)


@pytest.fixture(scope="module")
def artifact(tmp_path_factory):
    out = tmp_path_factory.mktemp("tamper") / "model"
    sy.build(sy.parse(MODEL), devices=["cpu:0", "cpu:1"], output=out, opt_level=2)
    return out


@pytest.fixture(scope="module")
def other_weights(tmp_path_factory):
    """MODEL with other constants: the same manifest but for weights.bin's checksum."""
    out = tmp_path_factory.mktemp("tamper_other") / "model"
    sy.build(sy.parse(MODEL.replace("{1, 2, 3", "{7, 2, 3")), devices=["cpu:0", "cpu:1"], output=out, opt_level=2)
    return out


def tampered(artifact, tmp_path, edit):
    copy = tmp_path / "copy"
    shutil.copytree(artifact, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    edit(manifest)
    (copy / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return copy


def swap(items, i, j):
    items[i], items[j] = items[j], items[i]


def swap_weight_names(m):
    assert len(m["weights"]) == 2 and m["weights"][0]["shape"] == m["weights"][1]["shape"]
    m["weights"][0]["name"], m["weights"][1]["name"] = m["weights"][1]["name"], m["weights"][0]["name"]


def shrink_arena(m):
    m["arenas"][0]["bytes"] //= 2
    m["arenas"][0]["lower_bound_bytes"] = 0


TAMPERS = {
    "arena shrunk": (shrink_arena, r"arenas\[0\]\.bytes is \d+ but .*model\.so was built for \d+"),
    "output reshaped": (lambda m: m["outputs"][0].update(shape=[6]),
                        r"outputs\[0\]\.shape is \[6\] but .*model\.so was built for \[2,3\]"),
    "output retyped": (lambda m: m["outputs"][0].update(dtype="int32"),
                       r"outputs\[0\]\.dtype is \"int32\" but .*model\.so was built for \"float32\""),
    "inputs reordered": (lambda m: swap(m["inputs"], 0, 1),
                         r"inputs\[0\]\.name is \"b\" but .*model\.so was built for \"a\""),
    "weights' names swapped": (swap_weight_names, r"weights\[0\]\.name is \"\S+\" but .*model\.so was built for"),
    "output moved to another device": (lambda m: m["outputs"][0].update(device=0),
                                       r"outputs\[0\]\.device is 0 but .*model\.so was built for 1"),
    "device given its own threads": (lambda m: m["devices"][1].update(threads=2),
                                     r"devices\[1\]\.threads is 2 but .*model\.so was built without it"),
    "format version bumped": (lambda m: m.update(format_version=10),
                              r"artifact format version 10 is newer than this runtime supports \(9\)"),
}


@pytest.mark.parametrize("name", TAMPERS)
def test_an_edited_manifest_is_refused_naming_the_field(artifact, tmp_path, name):
    edit, message = TAMPERS[name]
    copy = tampered(artifact, tmp_path, edit)
    with pytest.raises(sy.RuntimeError) as error:
        sy.runtime.load(copy)
    assert re.search(r"manifest\.json: " + message, str(error.value)), str(error.value)


def test_the_untouched_artifact_runs(artifact):
    model = sy.runtime.load(artifact)
    assert len(model.manifest["weights"]) == 2 and len(model.manifest["devices"]) == 2
    out = model.run(a=A, b=B)
    np.testing.assert_allclose(out, -np.maximum(A * W1 + B * W2, 0), rtol=1e-6)


def test_another_models_weights_with_their_checksum_are_refused(artifact, other_weights, tmp_path):
    # Both hashes used to be left out of the description, so replacing
    # weights.bin and editing its checksum loaded and ran the other weights.
    other = json.loads((other_weights / "manifest.json").read_text())["hashes"]["weights.bin"]
    ours = json.loads((artifact / "manifest.json").read_text())["hashes"]["weights.bin"]
    assert other != ours
    copy = tampered(artifact, tmp_path, lambda m: m["hashes"].update({"weights.bin": other}))
    shutil.copyfile(other_weights / "weights.bin", copy / "weights.bin")
    with pytest.raises(sy.RuntimeError) as error:
        sy.runtime.load(copy)
    assert re.search(rf'manifest\.json: hashes\.weights\.bin is "{other}" but .*model\.so was built for "{ours}"',
                     str(error.value)), str(error.value)


def description_of(artifact):
    """What model.so says it was built for (sy_model_description), as JSON."""
    library = ctypes.CDLL(str(artifact / "model.so"))
    library.sy_model_description.restype = ctypes.c_char_p
    return json.loads(library.sy_model_description().decode("ascii"))


def fields(value, path=()):
    """Every (path, value) of a JSON document down to its scalars and lists of scalars."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from fields(item, path + (key,))
    elif isinstance(value, list) and any(isinstance(item, (dict, list)) for item in value):
        for index, item in enumerate(value):
            yield from fields(item, path + (index,))
    else:
        yield path, value


@pytest.fixture(scope="module")
def convolution(tmp_path_factory):
    """A model with oneDNN primitives and prepared weights, so their fields are present too."""
    from onnx import TensorProto, helper, numpy_helper
    weight = np.random.default_rng(5).standard_normal((8, 3, 3, 3)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["y"], name="relu")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 16, 16])], [numpy_helper.from_array(weight, "w")])
    directory = tmp_path_factory.mktemp("convolution")
    path = directory / "conv.onnx"
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    sy.build(sy.frontend.from_onnx(path), devices=["cpu:0"], output=directory / "model")
    return directory / "model"


@pytest.mark.parametrize("which", ["artifact", "convolution"])
def test_the_description_holds_every_manifest_field_but_model_so_hash(request, which):
    built = request.getfixturevalue(which)
    manifest = json.loads((built / "manifest.json").read_text())
    if which == "convolution":
        assert manifest["primitives"] and any("prepared" in w for w in manifest["weights"]), "fields to cover"
    described = dict(fields(description_of(built)))
    in_manifest = dict(fields(manifest))
    assert ("hashes", "model.so") in in_manifest and ("hashes", "model.so") not in described
    del in_manifest[("hashes", "model.so")]
    # Every field the manifest has (a new one too) is described, with its value, and nothing else is.
    for path, value in in_manifest.items():
        assert path in described, f"{'.'.join(map(str, path))} is not in model.so's description"
        assert described[path] == value, f"{'.'.join(map(str, path))}: {described[path]!r} != {value!r}"
    assert sorted(map(str, described)) == sorted(map(str, in_manifest))
