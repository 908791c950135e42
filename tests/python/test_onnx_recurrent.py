# The ONNX RNN, GRU and LSTM converters (unrolled over the sequence) against
# PyTorch, in the directions ONNX's own node tests leave out: reverse and
# bidirectional, with initial states, batch-first input, and GRU's
# linear_before_reset=1 (PyTorch's form; the node tests use 0).
import numpy as np
import pytest

import switchyard as sy

torch = pytest.importorskip("torch")


def layers():
    return {
        "lstm": lambda bi, bf: torch.nn.LSTM(3, 4, bidirectional=bi, batch_first=bf),
        "gru": lambda bi, bf: torch.nn.GRU(3, 4, bidirectional=bi, batch_first=bf),
        "rnn_relu": lambda bi, bf: torch.nn.RNN(3, 4, bidirectional=bi, batch_first=bf, nonlinearity="relu"),
    }


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn_relu"])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_recurrent_layer_matches_pytorch(tmp_path, kind, bidirectional, batch_first):
    torch.manual_seed(3)
    layer = layers()[kind](bidirectional, batch_first).eval()
    directions = 2 if bidirectional else 1
    x = torch.randn(2, 5, 3) if batch_first else torch.randn(5, 2, 3)
    h0 = torch.randn(directions, 2, 4)
    state = (h0, torch.randn(directions, 2, 4)) if kind == "lstm" else h0
    names = ["x", "h0", "c0"] if kind == "lstm" else ["x", "h0"]
    path = tmp_path / f"{kind}.onnx"
    torch.onnx.export(layer, (x, state), str(path), opset_version=14, input_names=names)
    with torch.no_grad():
        expected = layer(x, state)
    expected = [expected[0], *expected[1]] if kind == "lstm" else list(expected)
    arrays = [x, *state] if kind == "lstm" else [x, state]
    got = sy.evaluate(sy.frontend.from_onnx(path), **{n: a.numpy() for n, a in zip(names, arrays)})
    got = list(got) if isinstance(got, tuple) else [got]
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e.numpy(), rtol=1e-5, atol=1e-5)
