"""The model suite's PyTorch models and inputs, built from fixed seeds.

One place that says what each suite model is, so the ONNX export
(export_models.py) and the PyTorch peer benchmark (bench/peers/torch_bench.py)
run the very same network with the very same random weights.
"""
import numpy as np
import torch
import torch.nn as nn


def _mlp():
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))


def _torchvision(name):
    import torchvision

    return getattr(torchvision.models, name)(weights=None)


def _encoder():
    # torch 1.13 exports activation="gelu" at opset 13 as its exact Erf
    # formula (Div, Erf, Add, Mul), so no hand-written GELU is needed.
    layer = nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, activation="gelu",
                                       batch_first=True, dropout=0.0)
    # enable_nested_tensor only matters with a padding mask, which the suite
    # never passes; off, so torch does not warn about it.
    return nn.TransformerEncoder(layer, num_layers=4, enable_nested_tensor=False)


# name -> (builder, input shape); batch 1, float32 throughout.
MODELS = {
    "mlp": (_mlp, (1, 784)),
    "resnet18": (lambda: _torchvision("resnet18"), (1, 3, 224, 224)),
    "resnet50": (lambda: _torchvision("resnet50"), (1, 3, 224, 224)),
    "mobilenet_v2": (lambda: _torchvision("mobilenet_v2"), (1, 3, 224, 224)),
    "encoder": (_encoder, (1, 128, 256)),
}


def _randomise_batch_norm(model, generator):
    # Freshly built BatchNorm has mean 0, variance 1, scale 1 and shift 0: an
    # identity, which would let an importer that drops or misreads it pass.
    # Variance stays near 1 so activations keep their scale through 50 layers.
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=generator) * 0.1)
            m.running_var.copy_(torch.rand(n, generator=generator) * 0.5 + 0.75)
            m.weight.data.copy_(torch.rand(n, generator=generator) * 0.5 + 0.75)
            m.bias.data.copy_(torch.randn(n, generator=generator) * 0.1)


def build_from_table(models, name):
    """Model `name` of the table `models` (name -> (builder, input shape)) in
    eval mode, identical on every call: built after seed 0, its BatchNorm
    statistics randomised from seed 1."""
    builder, _ = models[name]
    torch.manual_seed(0)
    model = builder()
    with torch.no_grad():
        _randomise_batch_norm(model, torch.Generator().manual_seed(1))
    return model.eval()


def input_from_table(models, name):
    """The float32 input for model `name` of the table `models` (standard
    normal, seed 0)."""
    _, shape = models[name]
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


def build_model(name):
    """The suite model `name` in eval mode, identical on every call."""
    return build_from_table(MODELS, name)


def make_input(name):
    """The suite's float32 input for `name` (standard normal, seed 0)."""
    return input_from_table(MODELS, name)
