"""The workload: a slice of conv layers from one of the ONNX models that ship with ZigZag."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

MODELS = ("resnet18", "alexnet", "mobilenetv2")
"""ONNX models under ``zigzag/inputs/workload`` (shapes inferred, weights left out)."""

DEFAULT_LAYERS = {"resnet18": (1, 12), "alexnet": (2, 4), "mobilenetv2": (5, 20, 35)}
"""Conv layers (0-based index among the model's Conv nodes) evaluated by default. For ResNet-18 the
first 3x3 conv of stage 1 (56x56 pixels, 64 -> 64 channels) and the 1x1 downsampling conv of
stage 3 (28x28 -> 14x14, 128 -> 256 channels): few channels and many pixels against the reverse,
which favour different dataflows. ZigZag's mapper tries 6! = 720 loop orders for a 3x3 conv and a
few dozen for a 1x1 conv, so the pair costs about 12 CPU-seconds."""


def model_path(model: str) -> Path:
    """The ONNX file of ``model`` inside the installed ZigZag package."""
    import zigzag

    if model not in MODELS:
        raise ValueError(f"unknown model {model!r}; expected one of {', '.join(MODELS)}")
    return Path(zigzag.__file__).parent / "inputs" / "workload" / f"{model}.onnx"


def conv_slice(model: str, layers: Sequence[int]):
    """The ONNX model reduced to the chosen Conv nodes, each read from and written to DRAM.

    Only the nodes are dropped: tensor shapes (``value_info``) stay, which is all ZigZag's ONNX
    parser needs. Returns an ``onnx.ModelProto``.
    """
    import onnx

    proto = onnx.load(str(model_path(model)), load_external_data=False)
    convs = [n for n in proto.graph.node if n.op_type == "Conv"]
    bad = [i for i in layers if not 0 <= i < len(convs)]
    if bad or not layers:
        raise ValueError(f"{model} has Conv layers 0..{len(convs) - 1}; got {list(layers)}")
    chosen = [convs[i] for i in layers]
    del proto.graph.node[:]
    proto.graph.node.extend(chosen)
    return proto
