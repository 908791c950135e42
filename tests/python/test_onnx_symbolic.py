"""Symbolic dimensions from ONNX (issue 37, step 2), on real torch exports.

A model exported with ``dynamic_axes`` imports with its batch symbolic, its
shape subgraphs (``x.view(x.size(0), -1)``) folded to symbolic reshapes; the
interpreter binds the batch from the inputs, so one import runs at any batch
size; specialising the import gives what a static import gives; inputs that
contradict the declared dimensions, and nodes that cannot take a symbolic
one yet, are refused by name.
"""
import os
import pathlib
import re
import subprocess

import numpy as np
import onnx
import pytest
import torch

import switchyard as sy

REPO = pathlib.Path(__file__).resolve().parents[2]
SWITCHYARD = pathlib.Path(os.environ.get("SY_BUILD_DIR", REPO / "build")) / "bin" / "switchyard"


class SmallNet(torch.nn.Module):
    """Conv, batch norm, ReLU, max and global pools, then x.view(x.size(0), -1) and a linear layer."""

    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(8, 6, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d((2, 2)))
        self.head = torch.nn.Linear(24, 5)

    def forward(self, x):
        y = self.features(x)
        return torch.softmax(self.head(y.view(y.size(0), -1)), dim=-1)


def export(module, example, path, dynamic):
    torch.manual_seed(0)
    module.eval()
    torch.onnx.export(module, example, str(path), input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": dynamic, "output": {0: dynamic[0]}}, opset_version=13)
    return path


@pytest.fixture(scope="module")
def small_net(tmp_path_factory):
    torch.manual_seed(0)
    net = SmallNet().eval()
    with torch.no_grad():  # batch norm statistics that are not the identity
        net.features[1].running_mean.uniform_(-1, 1)
        net.features[1].running_var.uniform_(0.5, 2)
    path = export(net, torch.randn(1, 3, 16, 16), tmp_path_factory.mktemp("small") / "small.onnx", {0: "batch"})
    return net, path


def run_cli(*args):
    return subprocess.run([str(SWITCHYARD), *map(str, args)], capture_output=True, text=True)


def test_the_export_computes_its_view_from_the_shape(small_net):
    _, path = small_net
    ops = [n.op_type for n in onnx.load(str(path)).graph.node]
    assert "Shape" in ops and "Reshape" in ops, "the view is exported as a shape subgraph, which the import folds"


def test_one_symbolic_import_runs_at_every_batch_size(small_net):
    net, path = small_net
    mod = sy.frontend.from_onnx(path)
    main = mod["main"]
    assert str(main.params[0].checked_type) == "Tensor[(batch, 3, 16, 16), float32]"
    assert str(main.ret_type) == "Tensor[(batch, 5), float32]"
    for batch in (1, 2, 4):
        x = np.random.default_rng(batch).standard_normal((batch, 3, 16, 16)).astype(np.float32)
        expected = net(torch.from_numpy(x)).detach().numpy()
        np.testing.assert_allclose(sy.evaluate(mod, input=x), expected, rtol=1e-4, atol=1e-5)


def test_specialising_the_import_gives_the_static_import(small_net):
    _, path = small_net
    symbolic = sy.frontend.from_onnx(path)
    fixed = sy.frontend.from_onnx(path, shapes={"input": (2, 3, 16, 16)})
    specialized = sy.transform.specialize(symbolic, {"batch": 2})
    assert str(specialized["main"].ret_type) == "Tensor[(2, 5), float32]"
    assert sy.ir.structural_equal(specialized, fixed)
    assert not sy.ir.structural_equal(symbolic, fixed)


def test_resnet18_imports_symbolic_and_specialises_to_its_static_import(tmp_path):
    torchvision = pytest.importorskip("torchvision", reason="torchvision exports the ResNet-18 under test")
    torch.manual_seed(0)
    path = export(torchvision.models.resnet18(), torch.randn(1, 3, 224, 224), tmp_path / "resnet18.onnx",
                  {0: "batch"})
    symbolic = sy.frontend.from_onnx(path)
    assert str(symbolic["main"].ret_type) == "Tensor[(batch, 1000), float32]"
    fixed = sy.frontend.from_onnx(path, shapes={"input": (4, 3, 224, 224)})
    assert sy.ir.structural_equal(sy.transform.specialize(symbolic, {"batch": 4}), fixed)


def test_shapes_name_bound_or_keep_dimensions(small_net):
    net, path = small_net
    named = sy.frontend.from_onnx(path, shapes={"input": ("n<=3", 3, 16, 16)})
    assert str(named["main"].params[0].checked_type) == "Tensor[(n<=3, 3, 16, 16), float32]"
    kept = sy.frontend.from_onnx(path, shapes={"input": ("?", 3, 16, 16)})
    assert str(kept["main"].params[0].checked_type) == "Tensor[(batch, 3, 16, 16), float32]"
    x = np.ones((4, 3, 16, 16), np.float32)
    with pytest.raises(sy.UsageError, match=r"input 'input' dimension 0 \(n<=3\) is 4, above the bound n <= 3"):
        sy.evaluate(named, input=x)
    with pytest.raises(sy.UsageError, match=r"dimension 1 is 3 in the model, not 4"):
        sy.frontend.from_onnx(path, shapes={"input": ("?", 4, 16, 16)})
    with pytest.raises(sy.UsageError, match=r"malformed shape"):
        sy.frontend.from_onnx(path, shapes={"input": ("n<=", 3, 16, 16)})
    with pytest.raises(sy.UsageError, match=r"bound of 'n'|cannot be 9"):
        sy.transform.specialize(named, {"n": 9})


def test_inputs_sharing_a_dimension_must_agree(tmp_path):
    x = onnx.helper.make_tensor_value_info("a", onnx.TensorProto.FLOAT, ["batch", 4])
    y = onnx.helper.make_tensor_value_info("b", onnx.TensorProto.FLOAT, ["batch", 4])
    out = onnx.helper.make_tensor_value_info("sum", onnx.TensorProto.FLOAT, ["batch", 4])
    graph = onnx.helper.make_graph([onnx.helper.make_node("Add", ["a", "b"], ["sum"], name="add")], "g", [x, y], [out])
    path = tmp_path / "two.onnx"
    onnx.save(onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 13)]), str(path))
    mod = sy.frontend.from_onnx(path)
    a, b = np.ones((2, 4), np.float32), np.ones((3, 4), np.float32)
    np.testing.assert_array_equal(sy.evaluate(mod, a=b, b=b), 2 * b)
    with pytest.raises(sy.UsageError, match=r"input 'b' dimension 0 \(batch\) is 3, but input 'a' dimension 0 "
                                            r"\(batch\) is 2: both are 'batch'"):
        sy.evaluate(mod, a=a, b=b)


def two_input_model(tmp_path, nodes, inputs, output):
    graph = onnx.helper.make_graph(nodes, "g", [onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, dims)
                                                for name, dims in inputs],
                                   [onnx.helper.make_tensor_value_info(output, onnx.TensorProto.FLOAT, None)])
    path = tmp_path / "two_names.onnx"
    onnx.save(onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 13)]), str(path))
    return path


# Exporters name one batch two ways (dynamic_axes {'a': {0: 'batch'}, 'b':
# {0: 'batch_size'}}); where the model needs them equal (an Add, a MatMul's
# contraction, a Concat's other axes) the import names them alike, the first
# input's name, so the signature says so and a run where they differ is
# refused naming both, never computed.
@pytest.mark.parametrize("case", ["add", "matmul", "concat"])
def test_inputs_naming_one_dimension_two_ways_are_taken_as_equal(tmp_path, case):
    rng = np.random.default_rng(0)
    if case == "add":
        path = two_input_model(tmp_path, [onnx.helper.make_node("Add", ["a", "b"], ["y"], name="add")],
                               [("a", ["batch", 4]), ("b", ["batch_size", 4])], "y")
        shapes, reference = ({"a": (3, 4), "b": (3, 4)}, lambda a, b: a + b)
        bad = {"a": (2, 4), "b": (3, 4)}
        message = r"input 'b' dimension 0 \(batch\) is 3, but input 'a' dimension 0 \(batch\) is 2"
    elif case == "matmul":
        path = two_input_model(tmp_path, [onnx.helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")],
                               [("a", [2, "k"]), ("b", ["inner", 5])], "y")
        shapes, reference = ({"a": (2, 6), "b": (6, 5)}, lambda a, b: a @ b)
        bad = {"a": (2, 6), "b": (7, 5)}
        message = r"input 'b' dimension 0 \(k\) is 7, but input 'a' dimension 1 \(k\) is 6"
    else:
        path = two_input_model(tmp_path, [onnx.helper.make_node("Concat", ["a", "b"], ["y"], name="cat", axis=1)],
                               [("a", ["n", 2]), ("b", ["m", 3])], "y")
        shapes, reference = ({"a": (4, 2), "b": (4, 3)}, lambda a, b: np.concatenate([a, b], axis=1))
        bad = {"a": (4, 2), "b": (5, 3)}
        message = r"input 'b' dimension 0 \(n\) is 5, but input 'a' dimension 0 \(n\) is 4"
    # The user is told which dimensions became one, and which node needed it.
    node = {"add": "'add' (Add)", "matmul": "'mm' (MatMul)", "concat": "'cat' (Concat)"}[case]
    with pytest.warns(UserWarning, match=r"note: .* are taken as one dimension, \w+, since node " + re.escape(node)):
        mod = sy.frontend.from_onnx(path)
    params = mod["main"].params
    symbol = {"add": "batch", "matmul": "k", "concat": "n"}[case]
    assert all(symbol in str(p.checked_type) for p in params), [str(p.checked_type) for p in params]
    inputs = {name: rng.standard_normal(shape).astype(np.float32) for name, shape in shapes.items()}
    want = reference(inputs["a"], inputs["b"])
    np.testing.assert_allclose(sy.evaluate(mod, **inputs), want, rtol=1e-6, atol=1e-6)
    # Compiled for two values of the shared dimension, run at one of them.
    value = shapes["b"][0]
    artifact = tmp_path / "two.art"
    result = run_cli("compile", path, "-o", artifact, "--specialize", f"{symbol}=1,{value}")
    assert result.returncode == 0, result.stderr
    assert f"are taken as one dimension, {symbol}, since node {node} needs them equal" in result.stderr
    loaded = sy.runtime.load(artifact)
    got = loaded.run(**inputs)
    np.testing.assert_allclose(got[0] if isinstance(got, (list, tuple)) else got, want, rtol=1e-5, atol=1e-5)
    wrong = {name: np.ones(shape, np.float32) for name, shape in bad.items()}
    with pytest.raises(sy.Error, match=message + ": the model needs them equal"):
        loaded.run(**wrong)


@pytest.mark.parametrize("batch_first", [True, False])
def test_an_encoder_layer_runs_at_every_batch_and_sequence_length(tmp_path, batch_first):
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, batch_first=batch_first).eval()
    axes = {0: "batch", 1: "seq"} if batch_first else {0: "seq", 1: "batch"}
    path = tmp_path / "encoder.onnx"
    torch.onnx.export(layer, torch.randn(2, 5, 16), str(path), input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": axes, "output": axes}, opset_version=13)
    mod = sy.frontend.from_onnx(path)
    signature = "(batch, seq, 16)" if batch_first else "(seq, batch, 16)"
    assert str(mod["main"].ret_type) == f"Tensor[{signature}, float32]"
    # Attention's heads go back from (batch*seq, 16) to (seq, batch, 16):
    # two symbolic dimensions move, so the reshape names its target.
    assert 'newshape=["seq", "batch", "16"]' in mod.astext(), mod.astext()
    rng = np.random.default_rng(0)
    for shape in [(1, 3, 16), (3, 7, 16), (2, 1, 16)]:
        x = rng.standard_normal(shape).astype(np.float32)
        np.testing.assert_allclose(sy.evaluate(mod, input=x), layer(torch.from_numpy(x)).detach().numpy(),
                                   rtol=1e-4, atol=1e-5)
    # Compiled once per (batch, seq), one artifact.
    art = tmp_path / "encoder.art"
    built = run_cli("compile", path, "--specialize", "batch=1,3", "--specialize", "seq=2,7", "-o", art)
    assert built.returncode == 0, built.stderr
    model = sy.runtime.load(art)
    for batch, seq in [(1, 2), (3, 7), (1, 7)]:
        x = rng.standard_normal((batch, seq, 16) if batch_first else (seq, batch, 16)).astype(np.float32)
        np.testing.assert_allclose(model.run(input=x), layer(torch.from_numpy(x)).detach().numpy(), rtol=1e-4,
                                   atol=1e-5)


class PositionEmbeddings(torch.nn.Module):
    """Token and position embeddings as BERT makes them (position_ids[:, :seq]), an encoder layer
    that masks padding (the mask expanded over the heads, zeros shaped like the scores), and the
    first token's state pooled as BERT's classifier reads it."""

    def __init__(self, vocab=50, width=16, max_len=12):
        super().__init__()
        self.tokens = torch.nn.Embedding(vocab, width)
        self.positions = torch.nn.Embedding(max_len, width)
        self.register_buffer("position_ids", torch.arange(max_len).unsqueeze(0))
        self.layer = torch.nn.TransformerEncoderLayer(width, 2, 32, batch_first=True, dropout=0.0)

    def forward(self, ids, mask):
        seq = ids.shape[1]
        states = self.layer(self.tokens(ids) + self.positions(self.position_ids[:, :seq]),
                            src_key_padding_mask=mask == 0)
        return states, torch.tanh(states[:, 0])


def test_a_bert_style_model_runs_at_every_batch_and_sequence_length(tmp_path):
    torch.manual_seed(0)
    net = PositionEmbeddings().eval()
    path = tmp_path / "embeddings.onnx"
    axes = {0: "batch", 1: "seq"}
    torch.onnx.export(net, (torch.randint(0, 50, (2, 5)), torch.ones(2, 5, dtype=torch.int64)), str(path),
                      input_names=["ids", "mask"], output_names=["states", "pooled"],
                      dynamic_axes={"ids": axes, "mask": axes, "states": axes, "pooled": {0: "batch"}},
                      opset_version=13)
    mod = sy.frontend.from_onnx(path)
    assert str(mod["main"].ret_type) == "(Tensor[(batch, seq, 16), float32], Tensor[(batch, 16), float32])"
    text = mod.astext()
    assert 'end=["seq"]' in text and 'shape=["batch", "2", "1", "seq"]' in text, text
    rng = np.random.default_rng(0)

    def case(batch, seq):
        ids = rng.integers(0, 50, (batch, seq))
        mask = np.ones((batch, seq), np.int64)
        mask[-1, (seq + 1) // 2:] = 0  # the last sequence padded
        with torch.no_grad():
            expected = [t.numpy() for t in net(torch.from_numpy(ids), torch.from_numpy(mask))]
        return {"ids": ids, "mask": mask}, expected

    for batch, seq in [(1, 1), (3, 7), (2, 12)]:
        inputs, expected = case(batch, seq)
        for got, want in zip(sy.evaluate(mod, **inputs), expected):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    art = tmp_path / "embeddings.art"
    built = run_cli("compile", path, "--specialize", "batch=1,3", "--specialize", "seq=4,12", "-o", art)
    assert built.returncode == 0, built.stderr
    model = sy.runtime.load(art)
    for batch, seq in [(3, 4), (1, 12)]:
        inputs, expected = case(batch, seq)
        for got, want in zip(model.run(**inputs), expected):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    # A sequence longer than the position table: the slice stops at 12, and
    # the sum of the two embeddings is refused by node, as PyTorch refuses it.
    with pytest.raises(sy.TypeInferenceError, match=r"'add' cannot broadcast shapes \(1, 13, 16\) and \(1, 12, 16\)"):
        sy.evaluate(mod, ids=np.zeros((1, 13), np.int64), mask=np.ones((1, 13), np.int64))


class CausalBlock(torch.nn.Module):
    """GPT-2's attention as nanoGPT writes it: q, k and v split from one
    projection, heads viewed with -1s, the causal mask sliced to the sequence
    (bias[:, :, :T, :T]) and filled; then a learned vector expanded over the
    batch (expand(n, -1, -1), as ViT's class token)."""

    def __init__(self, width=16, heads=2, max_len=12):
        super().__init__()
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.heads = heads
        self.register_buffer("bias", torch.tril(torch.ones(max_len, max_len)).view(1, 1, max_len, max_len))
        self.token = torch.nn.Parameter(torch.randn(1, 1, width))

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = (y.view(b, t, self.heads, -1).transpose(1, 2) for y in self.qkv(x).split(c, dim=2))
        scores = (q @ k.transpose(-2, -1)).masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
        y = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, t, c)
        return y + self.token.expand(b, -1, -1)


def test_a_causal_attention_block_runs_at_every_batch_and_sequence_length(tmp_path):
    torch.manual_seed(0)
    net = CausalBlock().eval()
    path = export(net, torch.randn(2, 5, 16), tmp_path / "causal.onnx", {0: "batch", 1: "seq"})
    mod = sy.frontend.from_onnx(path)
    assert str(mod["main"].ret_type) == "Tensor[(batch, seq, 16), float32]"
    rng = np.random.default_rng(0)
    for shape in [(1, 1, 16), (3, 7, 16), (2, 12, 16)]:
        x = rng.standard_normal(shape).astype(np.float32)
        np.testing.assert_allclose(sy.evaluate(mod, input=x), net(torch.from_numpy(x)).detach().numpy(),
                                   rtol=1e-4, atol=1e-5)
    art = tmp_path / "causal.art"
    built = run_cli("compile", path, "--specialize", "batch=1,3", "--specialize", "seq=4,12", "-o", art)
    assert built.returncode == 0, built.stderr
    model = sy.runtime.load(art)
    x = rng.standard_normal((3, 4, 16)).astype(np.float32)
    np.testing.assert_allclose(model.run(input=x), net(torch.from_numpy(x)).detach().numpy(), rtol=1e-4, atol=1e-5)


def test_a_concatenation_along_a_symbolic_axis_is_refused_by_node(tmp_path):
    class Prefixed(torch.nn.Module):  # a class token before a symbolic sequence: 1 + seq is a sum
        def forward(self, x):
            return torch.cat([x.mean(1, keepdim=True), x], dim=1)

    path = export(Prefixed(), torch.randn(2, 5, 16), tmp_path / "prefixed.onnx", {0: "batch", 1: "seq"})
    with pytest.raises(sy.ParseError, match=r"node '/Concat' \(Concat\): .*symbolic along the concatenated axis 1; a sum "
                                            r"of dimensions is not supported yet"):
        sy.frontend.from_onnx(path)


class UpsampledHead(torch.nn.Module):
    """A segmentation head's upsampling to the input's size (F.interpolate(size=x.shape[-2:]),
    whose sizes keep the batch as a computed shape), a padded window (Swin's F.pad of the
    spatial axes) and an unused dropout mask beside them."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, stride=2, padding=1)

    def forward(self, x):
        y = torch.nn.functional.interpolate(self.conv(x), size=x.shape[-2:], mode="bilinear", align_corners=False)
        return torch.nn.functional.pad(y, (0, 2, 1, 0))


def test_resizes_and_pads_of_spatial_axes_keep_a_symbolic_batch(tmp_path):
    torch.manual_seed(0)
    net = UpsampledHead().eval()
    path = export(net, torch.randn(1, 3, 10, 12), tmp_path / "head.onnx", {0: "batch"})
    mod = sy.frontend.from_onnx(path)
    assert str(mod["main"].ret_type) == "Tensor[(batch, 4, 11, 14), float32]"
    rng = np.random.default_rng(0)
    for batch in (1, 3):
        x = rng.standard_normal((batch, 3, 10, 12)).astype(np.float32)
        np.testing.assert_allclose(sy.evaluate(mod, input=x), net(torch.from_numpy(x)).detach().numpy(),
                                   rtol=1e-4, atol=1e-5)
    art = tmp_path / "head.art"
    built = run_cli("compile", path, "--specialize", "batch=2", "-o", art)
    assert built.returncode == 0, built.stderr
    x = rng.standard_normal((2, 3, 10, 12)).astype(np.float32)
    np.testing.assert_allclose(sy.runtime.load(art).run(input=x), net(torch.from_numpy(x)).detach().numpy(),
                               rtol=1e-4, atol=1e-5)


def test_a_resize_or_pad_of_the_symbolic_axis_is_refused_by_node(tmp_path):
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    pads = helper.make_tensor("pads", TensorProto.INT64, [4], [1, 0, 0, 0])
    pad = helper.make_model(helper.make_graph([helper.make_node("Pad", ["x", "pads"], ["y"], name="grow")], "g", [x],
                                              [y], [pads]), opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(pad, tmp_path / "pad.onnx")
    with pytest.raises(sy.ParseError, match=r"node 'grow' \(Pad\): pads symbolic dimension 'n' \(axis 0\)"):
        sy.frontend.from_onnx(tmp_path / "pad.onnx")
    scales = helper.make_tensor("scales", TensorProto.FLOAT, [2], [2.0, 1.0])
    resize = helper.make_model(helper.make_graph([helper.make_node("Resize", ["x", "", "scales"], ["y"], name="up")],
                                                 "g", [x], [y], [scales]), opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(resize, tmp_path / "resize.onnx")
    with pytest.raises(sy.ParseError, match=r"node 'up' \(Resize\): resizes symbolic dimension 'n' \(axis 0\)"):
        sy.frontend.from_onnx(tmp_path / "resize.onnx")


def test_operators_that_read_sizes_are_refused_a_symbolic_input_by_node(tmp_path):
    # Einsum takes symbolic sizes (test_onnx_einsum.py) but not along a
    # diagonal, whose steps are numbers: refused by node, naming the dimension.
    from onnx import TensorProto, helper
    einsum = helper.make_model(helper.make_graph(
        [helper.make_node("Einsum", ["a"], ["y"], equation="bii->bi", name="diag")], "g",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, "n", "n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, "n"])]), opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(einsum, tmp_path / "einsum.onnx")
    with pytest.raises(sy.ParseError, match=r"node 'diag' \(Einsum\): the diagonal of 'i' in term 'bii' runs along "
                                            r"symbolic dimension 'n', which is not supported \(fix it with --input-shape\)"):
        sy.frontend.from_onnx(tmp_path / "einsum.onnx")
    # A 1-D convolution goes through 2-D planes: refused by node, naming the dimension.
    conv = export(torch.nn.Conv1d(2, 3, 3).eval(), torch.randn(1, 2, 8), tmp_path / "conv1d.onnx", {0: "batch"})
    with pytest.raises(sy.ParseError, match=r"node '/Conv' \(Conv\): .*symbolic dimensions? .*\(dimension 0 is batch\)"):
        sy.frontend.from_onnx(conv)


def test_cli_check_shows_the_signature_run_ir_binds_it_and_compile_names_the_fix(small_net, tmp_path):
    net, path = small_net
    checked = run_cli("check", path)
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.splitlines() == [
        "ok", "symbolic dimensions (compile needs them fixed with --input-shape):",
        "  %input: Tensor[(batch, 3, 16, 16), float32]", "  result: Tensor[(batch, 5), float32]"]
    bounded = run_cli("check", path, "--input-shape", "input=n<=8x3x16x16")
    assert "  %input: Tensor[(n<=8, 3, 16, 16), float32]" in bounded.stdout.splitlines(), bounded.stderr
    refused = run_cli("compile", path, "-o", tmp_path / "never")
    assert refused.returncode == 1
    assert ("cannot compile: dimension batch of %input is symbolic (Tensor[(batch, 3, 16, 16), float32])"
            in refused.stderr), refused.stderr
    assert "--input-shape input=1x3x16x16" in refused.stderr
    assert not (tmp_path / "never").exists()
    x = np.random.default_rng(7).standard_normal((3, 3, 16, 16)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    ran = run_cli("run-ir", path, "--input", f"input={tmp_path / 'x.npy'}", "--output-dir", tmp_path / "out")
    assert ran.returncode == 0, ran.stderr
    np.testing.assert_allclose(np.load(tmp_path / "out" / "output.npy"), net(torch.from_numpy(x)).detach().numpy(),
                               rtol=1e-4, atol=1e-5)
    bounded = run_cli("run-ir", path, "--input-shape", "input=n<=2x3x16x16", "--input", f"input={tmp_path / 'x.npy'}",
                      "--output-dir", tmp_path / "out")
    assert bounded.returncode == 1
    assert "input 'input' dimension 0 (n<=2) is 3, above the bound n <= 2" in bounded.stderr
