"""Small training steps for the front end's tests (frontend/torch/import_torch_test.py), one per function, in the
FILE.py:FUNCTION form `dlsim import-torch` takes: FUNCTION(batch, seq_len) -> (model, inputs, loss_fn)."""
import torch
import torch.nn.functional as F
from torch import nn


class TinyBlock(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return x + torch.relu(self.fc(x))


class TinyNet(nn.Module):
    """A stem, two residual blocks (what --checkpointing blocks segments), a head."""

    def __init__(self, width=16, classes=4):
        super().__init__()
        self.stem = nn.Linear(8, width)
        self.blocks = nn.Sequential(TinyBlock(width), TinyBlock(width))
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))


def tiny_mlp(batch, seq_len):
    model = TinyNet()
    inputs = {"x": torch.empty(batch, 8), "labels": torch.zeros(batch, dtype=torch.long)}
    return model, inputs, lambda m, x: F.cross_entropy(m(x["x"]), x["labels"])


class TinyNetCheckpointingCalls(TinyNet):
    """TinyNet checkpointing each block as Hugging Face's GradientCheckpointingLayer does: non-reentrant checkpoint
    around the block's call (its forward hooks run in the replay too, and 2.x's early stop leaves them unreturned)."""

    def forward(self, x):
        from torch.utils.checkpoint import checkpoint
        x = self.stem(x)
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False)
        return self.head(x)


def tiny_mlp_checkpointing_calls(batch, seq_len):
    model = TinyNetCheckpointingCalls()
    inputs = {"x": torch.empty(batch, 8), "labels": torch.zeros(batch, dtype=torch.long)}
    return model, inputs, lambda m, x: F.cross_entropy(m(x["x"]), x["labels"])


def tiny_conv(batch, seq_len):
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(inplace=True),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 4 * 4, 3))
    inputs = {"images": torch.empty(batch, 3, 8, 8), "labels": torch.zeros(batch, dtype=torch.long)}
    return model, inputs, lambda m, x: F.cross_entropy(m(x["images"]), x["labels"])


class TinyAttention(nn.Module):
    """nn.MultiheadAttention as torchvision's ViT calls it: torch 1.13's path divides q by a Python number, whose
    wrapped tensor autograd saves."""

    def __init__(self, width=8):
        super().__init__()
        self.attention = nn.MultiheadAttention(width, 2, batch_first=True)
        self.head = nn.Linear(width, 3)

    def forward(self, x):
        y, _ = self.attention(x, x, x, need_weights=False)
        return self.head(y.mean(dim=1))


def tiny_attention(batch, seq_len):
    inputs = {"x": torch.empty(batch, seq_len, 8), "labels": torch.zeros(batch, dtype=torch.long)}
    return TinyAttention(), inputs, lambda m, x: F.cross_entropy(m(x["x"]), x["labels"])


def reads_a_value(batch, seq_len):
    model = TinyNet()
    inputs = {"x": torch.empty(batch, 8), "labels": torch.zeros(batch, dtype=torch.long)}

    def loss_fn(m, x):
        y = m(x["x"])
        if y.sum().item() > 0:  # data-dependent control flow: a fake tensor has no value
            y = y * 2
        return F.cross_entropy(y, x["labels"])

    return model, inputs, loss_fn


def raises_while_building(batch, seq_len):
    raise ValueError("this model cannot be built")


def returns_a_model_only(batch, seq_len):
    return TinyNet()
