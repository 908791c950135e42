"""Networks the project was not tuned on, one per operator family, for the
test that compiled artifacts match PyTorch on models beyond the suite
(tests/python/test_unseen_models.py).

Each is small enough to export, compile twice and run in seconds, and covers
what the five suite models do not: hard sigmoid and hard swish with
squeeze-and-excitation (MobileNetV3), a segmentation head with bilinear
upsampling (LRASPP), ceil-mode pools and concatenated branches
(SqueezeNet, GoogLeNet), channel shuffles (ShuffleNet), swish and
depthwise convolutions (EfficientNet), grouped convolutions (RegNet), a
Transformer decoder with a causal mask, and an attention block with a
residual and layer norm. Weights are random from fixed seeds; BatchNorm
statistics are randomised as in the suite (model_zoo.py), so no layer is an
identity.
"""
import torch
import torch.nn as nn

from model_zoo import _randomise_batch_norm


class LogitsOf(nn.Module):
    """A torchvision segmentation model's "out" tensor."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


class Decoder(nn.Module):
    """Two Transformer decoder layers over a memory, causally masked."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerDecoderLayer(d_model=64, nhead=4, dim_feedforward=128, batch_first=True, dropout=0.0)
        self.decoder = nn.TransformerDecoder(layer, num_layers=2)
        self.register_buffer("mask", torch.triu(torch.full((16, 16), float("-inf")), diagonal=1))

    def forward(self, target, memory):
        return self.decoder(target, memory, tgt_mask=self.mask)


class AttentionBlock(nn.Module):
    """Self-attention with a residual and a pre-norm, then a GELU MLP."""

    def __init__(self):
        super().__init__()
        self.norm1 = nn.LayerNorm(96)
        self.attention = nn.MultiheadAttention(96, 3, batch_first=True)
        self.norm2 = nn.LayerNorm(96)
        self.mlp = nn.Sequential(nn.Linear(96, 192), nn.GELU(), nn.Linear(192, 96))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attention(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


def _torchvision(name, segmentation=False):
    import torchvision

    if segmentation:
        return LogitsOf(getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None))
    kwargs = {"aux_logits": False, "init_weights": True} if name == "googlenet" else {}
    return getattr(torchvision.models, name)(weights=None, **kwargs)


# name -> (builder, input shapes)
MODELS = {
    "mobilenet_v3_small": (lambda: _torchvision("mobilenet_v3_small"), [(1, 3, 224, 224)]),
    "lraspp_mobilenet_v3": (lambda: _torchvision("lraspp_mobilenet_v3_large", True), [(1, 3, 160, 160)]),
    "squeezenet1_1": (lambda: _torchvision("squeezenet1_1"), [(1, 3, 224, 224)]),
    "googlenet": (lambda: _torchvision("googlenet"), [(1, 3, 224, 224)]),
    "shufflenet_v2_x0_5": (lambda: _torchvision("shufflenet_v2_x0_5"), [(1, 3, 224, 224)]),
    "efficientnet_b0": (lambda: _torchvision("efficientnet_b0"), [(1, 3, 224, 224)]),
    "regnet_y_400mf": (lambda: _torchvision("regnet_y_400mf"), [(1, 3, 224, 224)]),
    "decoder": (Decoder, [(1, 16, 64), (1, 24, 64)]),
    "attention_block": (AttentionBlock, [(2, 50, 96)]),
}


def build(name):
    """The model `name` in eval mode and its inputs, identical on every call."""
    builder, shapes = MODELS[name]
    torch.manual_seed(0)
    model = builder().eval()
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        _randomise_batch_norm(model, generator)
    inputs = [torch.randn(*shape, generator=generator) for shape in shapes]
    return model, inputs
