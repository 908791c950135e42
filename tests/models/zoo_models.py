"""The model zoo (bench/zoo/): real networks as a new user would bring them.

Every torchvision classification family, the three segmentation models,
BERT-base- and GPT-2-sized Transformer stacks written here from
nn.TransformerEncoderLayer, an LSTM and a GRU, and three of them at batch 8.
Weights are random from fixed seeds, BatchNorm statistics randomised as in
the suite (model_zoo.py), so no layer is an identity. The same interface as
model_zoo.py (MODELS, build_model, make_input), so that export_models.py and
bench/peers/torch_bench.py serve both.
"""
import torch
import torch.nn as nn

from model_zoo import build_from_table, input_from_table


class SegmentationLogits(nn.Module):
    """A torchvision segmentation model's "out" tensor (the dict it returns
    does not export as one output)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


class TransformerStack(nn.Module):
    """`layers` Transformer layers of width `width` over embedded tokens
    (batch, sequence, width): BERT-base when post-norm and unmasked, GPT-2's
    decoder when pre-norm (with a final LayerNorm) and causally masked."""

    def __init__(self, layers, width, heads, sequence, causal):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model=width, nhead=heads, dim_feedforward=4 * width, activation="gelu",
                                           batch_first=True, dropout=0.0, norm_first=causal)
        self.layers = nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)
        self.final_norm = nn.LayerNorm(width) if causal else nn.Identity()
        mask = torch.triu(torch.full((sequence, sequence), float("-inf")), diagonal=1) if causal else None
        self.register_buffer("mask", mask)

    def forward(self, x):
        return self.final_norm(self.layers(x, mask=self.mask))


class Recurrent(nn.Module):
    """A two-layer LSTM or GRU over a sequence (batch, time, features); its
    output sequence alone."""

    def __init__(self, kind, features=256, hidden=512):
        super().__init__()
        self.rnn = getattr(nn, kind)(features, hidden, num_layers=2, batch_first=True)

    def forward(self, x):
        return self.rnn(x)[0]


def _classifier(name, **kwargs):
    import torchvision

    return getattr(torchvision.models, name)(weights=None, **kwargs)


def _segmentation(name):
    import torchvision

    return SegmentationLogits(getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None,
                                                                             aux_loss=False))


IMAGE = (1, 3, 224, 224)
BATCH8_IMAGE = (8, 3, 224, 224)
TOKENS = 128  # sequence length of the Transformer stacks


def _bert_base():
    return TransformerStack(layers=12, width=768, heads=12, sequence=TOKENS, causal=False)


def _gpt2():
    return TransformerStack(layers=12, width=768, heads=12, sequence=TOKENS, causal=True)


# name -> (builder, input shape); float32 throughout.
MODELS = {
    "resnet18": (lambda: _classifier("resnet18"), IMAGE),
    "resnet50": (lambda: _classifier("resnet50"), IMAGE),
    "resnext50_32x4d": (lambda: _classifier("resnext50_32x4d"), IMAGE),
    "wide_resnet50_2": (lambda: _classifier("wide_resnet50_2"), IMAGE),
    "regnet_x_400mf": (lambda: _classifier("regnet_x_400mf"), IMAGE),
    "regnet_y_400mf": (lambda: _classifier("regnet_y_400mf"), IMAGE),
    "regnet_y_1_6gf": (lambda: _classifier("regnet_y_1_6gf"), IMAGE),
    "mobilenet_v2": (lambda: _classifier("mobilenet_v2"), IMAGE),
    "mobilenet_v3_small": (lambda: _classifier("mobilenet_v3_small"), IMAGE),
    "mobilenet_v3_large": (lambda: _classifier("mobilenet_v3_large"), IMAGE),
    "efficientnet_b0": (lambda: _classifier("efficientnet_b0"), IMAGE),
    "mnasnet1_0": (lambda: _classifier("mnasnet1_0"), IMAGE),
    "shufflenet_v2_x1_0": (lambda: _classifier("shufflenet_v2_x1_0"), IMAGE),
    "squeezenet1_0": (lambda: _classifier("squeezenet1_0"), IMAGE),
    "squeezenet1_1": (lambda: _classifier("squeezenet1_1"), IMAGE),
    "densenet121": (lambda: _classifier("densenet121"), IMAGE),
    "googlenet": (lambda: _classifier("googlenet", aux_logits=False, init_weights=True), IMAGE),
    "inception_v3": (lambda: _classifier("inception_v3", aux_logits=False, init_weights=True), (1, 3, 299, 299)),
    "vgg16": (lambda: _classifier("vgg16"), IMAGE),
    "alexnet": (lambda: _classifier("alexnet"), IMAGE),
    "convnext_tiny": (lambda: _classifier("convnext_tiny"), IMAGE),
    "vit_b_16": (lambda: _classifier("vit_b_16"), IMAGE),
    "swin_t": (lambda: _classifier("swin_t"), IMAGE),
    "maxvit_t": (lambda: _classifier("maxvit_t"), IMAGE),
    "fcn_resnet50": (lambda: _segmentation("fcn_resnet50"), IMAGE),
    "deeplabv3_resnet50": (lambda: _segmentation("deeplabv3_resnet50"), IMAGE),
    "deeplabv3_mobilenet_v3_large": (lambda: _segmentation("deeplabv3_mobilenet_v3_large"), IMAGE),
    "lraspp_mobilenet_v3_large": (lambda: _segmentation("lraspp_mobilenet_v3_large"), IMAGE),
    "bert_base": (_bert_base, (1, TOKENS, 768)),
    "gpt2": (_gpt2, (1, TOKENS, 768)),
    "lstm": (lambda: Recurrent("LSTM"), (1, 64, 256)),
    "gru": (lambda: Recurrent("GRU"), (1, 64, 256)),
    "resnet50_b8": (lambda: _classifier("resnet50"), BATCH8_IMAGE),
    "mobilenet_v2_b8": (lambda: _classifier("mobilenet_v2"), BATCH8_IMAGE),
    "bert_base_b8": (_bert_base, (8, TOKENS, 768)),
}

# Every torchvision classification and segmentation model of the zoo at
# batch 1: the set exported at each opset (export_models.py --opsets).
GROUPS = {
    "torchvision": [name for name in MODELS
                    if name not in ("bert_base", "gpt2", "lstm", "gru") and not name.endswith("_b8")],
}

# Models whose export needs a later opset than the suite's 13.
OPSETS = {}


def build_model(name):
    """The zoo model `name` in eval mode, identical on every call."""
    return build_from_table(MODELS, name)


def make_input(name):
    """The zoo's float32 input for `name` (standard normal, seed 0)."""
    return input_from_table(MODELS, name)
