"""Model importers: ONNX files to IRModules.

    mod = sy.frontend.from_onnx("resnet18.onnx", shapes={"input": (1, 3, 224, 224)})

The module's ``main`` takes the graph's inputs by their ONNX names; each node
imported from an ONNX node has that node's name as its span, so placement
rules (``"node:/layer4/*=cpu:1"``) and errors use the model's own names.
"""
import os as _os

import numpy as _np

from . import _switchyard as _native
from ._errors import check_file as _check_file
from ._errors import error as _error


def from_onnx(path, shapes=None):
    """Imports the ONNX model at ``path`` (opsets 7-21; external data beside it).

    ``shapes`` maps input names to tuples whose items are ints (fixing a
    dimension) or strings: ``"?"`` keeps the model's symbolic dimension,
    ``"n"`` names it, ``"n<=32"`` (or ``"?<=32"``) bounds it. A dimension the
    model leaves symbolic and ``shapes`` does not fix stays symbolic: a
    ``dim_param`` ``batch`` becomes the variable ``batch`` (one variable in
    every input naming it), an unnamed one ``<input>_d<index>``.
    Raises ``sy.ParseError`` for a malformed model, unsupported operators
    (all listed with their node names) or an operator version that is not
    converted (naming the node, the version and why), and ``sy.UsageError`` for a shape that
    names no input; a missing file is a ``sy.UsageError`` that is also a
    ``FileNotFoundError``.
    """
    if not isinstance(path, (str, _os.PathLike)):
        raise _error("UsageError", f"from_onnx() takes a path, got {type(path).__name__}", TypeError)
    if shapes is not None and not isinstance(shapes, dict):
        raise _error("UsageError", f"shapes must be a dict of input name -> tuple of dimensions, got {type(shapes).__name__}",
                     TypeError)
    fixed = {}
    for name, dims in (shapes or {}).items():
        if not isinstance(name, str):
            raise _error("UsageError", f"shape names must be str, got {type(name).__name__}", TypeError)
        if not isinstance(dims, (list, tuple)) or not all(
                (isinstance(d, (int, _np.integer)) and not isinstance(d, bool)) or isinstance(d, str) for d in dims):
            raise _error("UsageError", f"the shape of {name!r} must be a tuple of ints and strings ('?', 'n', "
                         f"'n<=32'), got {dims!r}", TypeError)
        if any(isinstance(d, str) and "," in d for d in dims):
            raise _error("UsageError", f"the shape of {name!r} has a dimension with a comma: {dims!r}")
        fixed[name] = ",".join(str(d) if isinstance(d, str) else str(int(d)) for d in dims)
    _check_file("UsageError", path)
    return _native.frontend.from_onnx(_os.fspath(path), fixed)


def onnx_operators():
    """The ONNX operators the importer knows: ``{op_type: {version: None or
    why not}}``, one entry per version of the operator in ONNX (the
    ``since_version`` of each of its schemas), None where it is converted.
    A model's opset selects, for each operator, the newest version at or
    below it; ``ONNX_OPSETS`` is the (oldest, newest) opset imported.

        sy.frontend.onnx_operators()["Upsample"]
        # {1: 'Upsample-1 is not supported (...)', 7: None, 9: None, 10: 'Upsample-10 is deprecated: ...'}
    """
    return _native.frontend.onnx_operators()


ONNX_OPSETS = _native.frontend.ONNX_OPSETS

__all__ = ["from_onnx", "onnx_operators", "ONNX_OPSETS"]
