# ONNX's Einsum (opset 12), converted to sums, transposes, reshapes and
# batched matrix products: the equations real exports use (batched matmul
# forms, attention's "bhqd,bhkd->bhqk", transposes, reductions, outer
# products, ellipses, the implicit output) and general ones with summed-out
# and broadcast letters, against np.einsum through the interpreter and a
# compiled artifact; three operands contracted left to right; and each
# diagonals (a letter repeated in a term); and each refusal (a malformed
# equation) naming the node.
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import switchyard as sy

RNG = np.random.default_rng(12)


def einsum_model(path, equation, operands):
    names = [f"x{i}" for i in range(len(operands))]
    node = helper.make_node("Einsum", names, ["y"], name="einsum", equation=equation)
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, v.shape) for n, v in zip(names, operands)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)]), str(path))
    return path, dict(zip(names, operands))


def operands_for(*shapes):
    return [RNG.standard_normal(shape).astype(np.float32) for shape in shapes]


def close(actual, expected):
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4)


# Equation, operand shapes.
EQUATIONS = [
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 8), (2, 3, 5, 8)]),
    ("bhqk,bhkd->bhqd", [(2, 3, 4, 5), (2, 3, 5, 8)]),
    ("...ij,...jk->...ik", [(2, 3, 4, 5), (2, 3, 5, 6)]),
    ("...ij,...jk->...ik", [(3, 4, 5), (2, 1, 5, 6)]),  # the ellipsis broadcasts
    ("ij,jk", [(3, 4), (4, 5)]),  # implicit output: ik
    ("ij->ji", [(3, 4)]),
    ("ij->i", [(3, 4)]),
    ("ijk->", [(2, 3, 4)]),
    ("ijk", [(2, 3, 4)]),  # implicit: the identity
    ("ji", [(3, 4)]),  # implicit: ij, a transpose
    ("i,j->ij", [(3,), (4,)]),
    ("i,i->", [(5,)] * 2),
    ("i,i", [(5,)] * 2),
    ("bi,bi->b", [(3, 5), (3, 5)]),
    ("ij,kj->ikj", [(3, 4), (5, 4)]),  # batch letter in the middle
    ("abc,cd->dba", [(2, 3, 4), (4, 5)]),
    ("bxyc,cz->bzy", [(2, 3, 4, 5), (5, 6)]),  # x summed out of the left operand alone
    ("nchw,kc->nkhw", [(2, 3, 4, 5), (6, 3)]),
    ("bij,bjk->ik", [(2, 3, 4), (2, 4, 5)]),  # the batch letter contracted too
    ("i j, j k -> i k", [(3, 4), (4, 5)]),  # spaces
    ("bIJ,bJK->bIK", [(2, 3, 4), (2, 4, 5)]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
    ("ii->i", [(3, 3)]),  # diagonals
    ("ii", [(4, 4)]),  # implicit: the trace
    ("bii->bi", [(2, 3, 3)]),
    ("...ii->...i", [(2, 3, 4, 4)]),
    ("iji->j", [(3, 5, 3)]),
    ("iiii->i", [(2, 2, 2, 2)]),
    ("iijj->ij", [(3, 3, 2, 2)]),
    ("ii,ij->j", [(3, 3), (3, 4)]),
    ("ab,bc,cd", [(2, 3), (3, 4), (4, 5)]),
    ("i,j,k->ijk", [(2,), (3,), (4,)]),
]


@pytest.mark.parametrize("equation, shapes", EQUATIONS, ids=[e for e, _ in EQUATIONS])
def test_einsum_matches_numpy_in_the_interpreter(tmp_path, equation, shapes):
    operands = operands_for(*shapes)
    path, feeds = einsum_model(tmp_path / "e.onnx", equation, operands)
    close(sy.evaluate(sy.frontend.from_onnx(path), **feeds), np.einsum(equation, *operands))


def test_einsum_of_maxvit_and_attention_forms_compiles(tmp_path):
    """A chain of the forms models export, built for cpu:0 and split over
    cpu:0 and cpu:1."""
    q, k, v, w = operands_for((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8), (8, 6))
    nodes = [helper.make_node("Einsum", ["q", "k"], ["scores"], name="scores", equation="bhqd,bhkd->bhqk"),
             helper.make_node("Einsum", ["scores", "v"], ["context"], name="context", equation="bhqk,bhkd->bhqd"),
             helper.make_node("Einsum", ["context", "w"], ["projected"], name="project", equation="...d,de->...e"),
             helper.make_node("Einsum", ["projected"], ["y"], name="swap", equation="bhqe->bqeh")]
    feeds = {"q": q, "k": k, "v": v, "w": w}
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape)
                                           for n, a in feeds.items()],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)]), str(tmp_path / "m.onnx"))
    scores = np.einsum("bhqd,bhkd->bhqk", q, k)
    want = np.einsum("bhqe->bqeh", np.einsum("...d,de->...e", np.einsum("bhqk,bhkd->bhqd", scores, v), w))
    mod = sy.frontend.from_onnx(tmp_path / "m.onnx")
    close(sy.evaluate(mod, **feeds), want)
    for name, devices, place in [("one", ["cpu:0"], []), ("split", ["cpu:0", "cpu:1"], ["node:context=cpu:1"])]:
        sy.build(mod, devices, tmp_path / name, place=place)
        got = sy.runtime.load(tmp_path / name).run(**feeds)
        close(got[0] if isinstance(got, (list, tuple)) else got, want)


def test_einsum_over_a_symbolic_batch_runs_at_every_batch(tmp_path):
    """MaxViT's relative attention and a batched product with a dynamic
    batch: one import, the interpreter at several batches, and an artifact
    specialised for two that runs a third in chunks."""
    nodes = [helper.make_node("Einsum", ["q", "k"], ["scores"], name="scores", equation="bhqd,bhkd->bhqk"),
             helper.make_node("Einsum", ["scores", "v"], ["context"], name="context", equation="bhqk,bhkd->bhqd"),
             helper.make_node("Einsum", ["context", "w"], ["y"], name="project", equation="...d,de->...e")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("q", TensorProto.FLOAT, ["n", 3, 4, 8]),
                                           helper.make_tensor_value_info("k", TensorProto.FLOAT, ["n", 3, 5, 8]),
                                           helper.make_tensor_value_info("v", TensorProto.FLOAT, ["n", 3, 5, 8]),
                                           helper.make_tensor_value_info("w", TensorProto.FLOAT, [8, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)]), str(tmp_path / "m.onnx"))
    mod = sy.frontend.from_onnx(tmp_path / "m.onnx")
    assert str(mod["main"].ret_type) == "Tensor[(n, 3, 4, 6), float32]"

    def feeds_for(n):
        q, k, v, w = operands_for((n, 3, 4, 8), (n, 3, 5, 8), (n, 3, 5, 8), (8, 6))
        want = np.einsum("...d,de->...e", np.einsum("bhqk,bhkd->bhqd", np.einsum("bhqd,bhkd->bhqk", q, k), v), w)
        return {"q": q, "k": k, "v": v, "w": w}, want

    for n in (1, 2, 5):
        feeds, want = feeds_for(n)
        close(sy.evaluate(mod, **feeds), want)
    sy.build(mod, ["cpu:0"], tmp_path / "art", specialize={"n": [1, 2]})
    model = sy.runtime.load(tmp_path / "art")
    for n in (2, 3):  # 3 runs as 2 + 1
        feeds, want = feeds_for(n)
        got = model.run(**feeds)
        close(got[0] if isinstance(got, (list, tuple)) else got, want)


@pytest.mark.parametrize("equation, shapes, message", [
    ("iij->j", [(3, 4, 5)], r"'i' has sizes 3 and 4 in term 'iij'"),
    ("ij,jk->ik", [(3, 4)], r"the equation 'ij,jk->ik' has 2 terms for 1 inputs"),
    ("ij->ik", [(3, 4)], r"the output's 'k' is in no input term"),
    ("ij->ii", [(3, 4)], r"'i' appears twice in the output"),
    ("ijk->i", [(3, 4)], r"term 0 'ijk' has 3 letters for an input of rank 2"),
    ("i1->i", [(3, 4)], r"the equation's term 0 'i1' holds '1': only letters and one '...' are allowed"),
    ("ij,jk->ik", [(3, 4), (5, 6)], r"'j' has size 4 in one term and 5 in term 1"),
])
def test_einsum_refusals_name_the_node(tmp_path, equation, shapes, message):
    path, _ = einsum_model(tmp_path / "e.onnx", equation, operands_for(*shapes))
    with pytest.raises(sy.ParseError, match=r"node 'einsum' \(Einsum\): " + message):
        sy.frontend.from_onnx(path)
