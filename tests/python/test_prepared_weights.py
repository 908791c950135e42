"""Weights the compiler stores prepared (in their primitive's layout) only
where nothing but that primitive reads them: a constant a matmul reads as
its weights and an addition reads as well stays plain, and both read it right."""
import json

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import switchyard as sy


def test_a_weight_read_by_a_primitive_and_by_other_code_stays_plain(tmp_path):
    rng = np.random.default_rng(3)
    w = rng.standard_normal((16, 16)).astype(np.float32)
    v = rng.standard_normal((16, 24)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="shared/matmul"),
         helper.make_node("Add", ["y", "w"], ["z"], name="shared/add"),
         helper.make_node("MatMul", ["z", "v"], ["out"], name="alone/matmul")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 16])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [16, 24])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(v, "v")])
    path = tmp_path / "shared.onnx"
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    mod = sy.frontend.from_onnx(path)
    x = rng.standard_normal((16, 16)).astype(np.float32)

    sy.build(mod, ["cpu:0"], tmp_path / "art")
    weights = {tuple(w["shape"]): w for w in json.loads((tmp_path / "art" / "manifest.json").read_text())["weights"]}
    assert "prepared" not in weights[(16, 16)], weights[(16, 16)]
    assert weights[(16, 24)]["prepared"].split(" ")[0] in ("packed", "onednn"), weights[(16, 24)]
    actual = np.asarray(sy.runtime.load(tmp_path / "art").run(x=x))
    expected = (x @ w + w) @ v
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
