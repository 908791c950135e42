# Resource limits through the Python API and the command line: tensor types
# whose size overflows int64, constants checked before allocation, inputs
# read only from regular files, messages that quote a line's worth of input.
import os
import pathlib
import subprocess

import numpy as np
import pytest

import switchyard as sy
from switchyard import ir

REPO = pathlib.Path(__file__).resolve().parents[2]
SWITCHYARD = pathlib.Path(os.environ.get("SY_BUILD_DIR", REPO / "build")) / "bin" / "switchyard"


def test_a_tensor_type_whose_size_overflows_is_refused():
    with pytest.raises(sy.Error, match=r"Tensor\[\(4611686018427387904, 4611686018427387904\), float32\] is too large"):
        ir.TensorType((2**62, 2**62))
    with pytest.raises(sy.ParseError, match="overflows int64"):
        sy.parse("def @main(%x: Tensor[(4294967296, 4294967296), float32]) {\n  %x\n}\n")


def test_a_huge_constant_is_refused_by_position_not_bad_alloc():
    with pytest.raises(sy.ParseError, match="needs 1000000000000000 elements, found 0") as info:
        sy.parse("def @main() {\n  Tensor[(1000000000000000), float32]{}\n}\n")
    assert str(info.value.span) == "<string>:2:39"


def test_a_huge_attribute_gives_a_short_message():
    text = ("def @main(%x: Tensor[(4), float32], %i: Tensor[(2), int32]) {\n  take(%x, %i, mode=\""
            + "A" * 20_000_000 + "\")\n}\n")
    with pytest.raises(sy.Error) as info:
        sy.parse(text)
    assert len(str(info.value)) < 2000
    assert "more characters" in str(info.value)


def test_an_input_that_is_not_a_regular_file_fails_at_once(tmp_path):
    model = tmp_path / "m.sy"
    model.write_text("def @main(%x: Tensor[(4), float32]) {\n  negative(%x)\n}\n")
    result = subprocess.run([str(SWITCHYARD), "run-ir", str(model), "--input", "x=/dev/zero",
                             "--output-dir", str(tmp_path / "out")], capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert "input 'x': /dev/zero: is a character device, not a regular file" in result.stderr
    # A regular file whose size matches its header still runs.
    np.save(tmp_path / "x.npy", np.arange(4, dtype=np.float32))
    result = subprocess.run([str(SWITCHYARD), "run-ir", str(model), "--input", f"x={tmp_path / 'x.npy'}",
                             "--output-dir", str(tmp_path / "out")], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert np.array_equal(np.load(tmp_path / "out" / "output_0.npy"), -np.arange(4, dtype=np.float32))


def test_an_onnx_input_too_large_for_a_tensor_type_is_named(tmp_path):
    from onnx import TensorProto, helper
    graph = helper.make_graph([helper.make_node("Relu", ["image"], ["y"], name="relu")], "g",
                              [helper.make_tensor_value_info("image", TensorProto.FLOAT, [2**62, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2**62, 4])])
    path = tmp_path / "huge_input.onnx"
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    with pytest.raises(sy.ParseError, match=r"input 'image': the tensor type .* is too large"):
        sy.frontend.from_onnx(path)


def test_an_onnx_initializer_larger_than_memory_is_named(tmp_path):
    # Its external data is all there (a sparse 1 TiB file), so only memory refuses it.
    import onnx
    from onnx import TensorProto, helper
    elements = 1 << 38
    big = TensorProto(name="weights/big", data_type=TensorProto.FLOAT, dims=[elements])
    big.data_location = TensorProto.EXTERNAL
    for key, value in {"location": "big.bin", "offset": "0", "length": str(4 * elements)}.items():
        entry = big.external_data.add()
        entry.key, entry.value = key, value
    graph = helper.make_graph([helper.make_node("Identity", ["weights/big"], ["y"], name="copy")], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [elements])], [big])
    path = tmp_path / "big.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    with open(tmp_path / "big.bin", "wb") as data:
        data.truncate(4 * elements)
    with pytest.raises(sy.ParseError, match=r"tensor 'weights/big': .*more than this machine's .* of memory"):
        sy.frontend.from_onnx(path)


@pytest.mark.parametrize("make", [
    lambda text: ir.VirtualDevice(text),
    lambda text: ir.VirtualDevice('device="' + text + '"'),
    lambda text: sy.build(sy.parse(MODEL_FOR_DEVICES), devices=["cpu:0", text], output="/nonexistent/never"),
])
def test_a_huge_device_string_gives_a_short_message(make):
    text = "x" * 100_000_000
    with pytest.raises(sy.Error) as info:
        make(text)
    assert len(str(info.value)) < 1000, len(str(info.value))
    assert "more characters" in str(info.value)


MODEL_FOR_DEVICES = "def @main(%x: Tensor[(4), float32]) {\n  negative(%x)\n}\n"
def test_constant_folding_makes_no_constant_larger_than_the_limit_from_smaller_ones(tmp_path):
    # 57 bytes of text for 2 GB of ones: folded, it took 86 s and 5.7 GB to
    # compile and wrote a 2 GB weights.bin. It stays a kernel.
    model = tmp_path / "broadcast.sy"
    model.write_text("def @main() {\n  broadcast_to(1f, shape=[25000, 20000])\n}\n")
    result = subprocess.run([str(SWITCHYARD), "compile", str(model), "-o", str(tmp_path / "big")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "1 kernel calls" in result.stdout
    assert (tmp_path / "big" / "weights.bin").stat().st_size == 0
    # The limit is the user's to raise (or lower): 4000 bytes fold under the
    # default, not under a limit of 1000, and either way the model computes ones.
    model.write_text("def @main() {\n  broadcast_to(1f, shape=[1000])\n}\n")
    for flags, weights in [([], 4000), (["--max-folded-bytes", "1000"], 0)]:
        artifact = tmp_path / f"small{len(flags)}"
        result = subprocess.run([str(SWITCHYARD), "compile", str(model), "-o", str(artifact), *flags],
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        assert (artifact / "weights.bin").stat().st_size == weights
        assert np.array_equal(sy.runtime.load(artifact).run(), np.ones(1000, np.float32))
    with sy.transform.PassContext(config={"FoldConstant.max_bytes": 1000}):
        assert "broadcast_to" in sy.transform.default_pipeline(["cpu:0"])(sy.parse(model.read_text())).astext()
