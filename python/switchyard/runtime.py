"""Loading and running compiled artifacts.

    model = sy.runtime.load("out/")
    y = model.run(x=np.ones((1, 784), np.float32))
    for k in model.last_stats.kernels:
        print(k.name, k.device)
"""
import dataclasses as _dataclasses
import json as _json
import os as _os

import numpy as _np

from ._switchyard import runtime as _rt


@_dataclasses.dataclass(frozen=True)
class KernelRecord:
    """One kernel run: its name, the device it ran on and its time."""
    index: int
    name: str
    device: str
    device_index: int
    elapsed_ns: int


@_dataclasses.dataclass(frozen=True)
class CopyRecord:
    """One device copy: from and to which device, how many bytes, its time."""
    index: int
    src: str
    dst: str
    bytes: int
    elapsed_ns: int


@_dataclasses.dataclass(frozen=True)
class RunStats:
    """What one run did, in execution order."""
    kernels: list
    copies: list
    total_ns: int

    @property
    def devices(self):
        """The set of device names kernels ran on."""
        return {k.device for k in self.kernels}


def _stats(raw):
    return RunStats(kernels=[KernelRecord(**k) for k in raw["kernels"]],
                    copies=[CopyRecord(**c) for c in raw["copies"]],
                    total_ns=raw["total_ns"])


class Module:
    """A loaded artifact. ``run`` is safe to call from several threads."""

    def __init__(self, artifact):
        self._artifact = artifact
        self._manifest = _json.loads(artifact.manifest_json)
        self.last_stats = None

    @property
    def directory(self):
        return self._artifact.directory

    @property
    def manifest(self):
        """The manifest (inputs, outputs, devices, kernels, copies) as a dict."""
        return self._manifest

    @property
    def input_names(self):
        return list(self._artifact.input_names)

    @property
    def output_names(self):
        return list(self._artifact.output_names)

    def _arrays(self, args, inputs):
        names = self.input_names
        if len(args) > len(names):
            raise TypeError(f"run() takes at most {len(names)} positional inputs, got {len(args)}")
        given = dict(zip(names, args))
        for name, value in inputs.items():
            if name in given:
                raise TypeError(f"input '{name}' given twice")
            given[name] = value
        dtypes = {t["name"]: t["dtype"] for t in self._manifest.get("inputs", [])}
        arrays = {}
        for name, value in given.items():
            if isinstance(value, (_np.ndarray, _np.generic)):
                arrays[name] = value
            else:
                arrays[name] = _np.asarray(value, dtype=dtypes.get(name))
        return arrays

    def run(self, *args, record_stats=True, **inputs):
        """Runs on inputs (positional in manifest order, or by name).

        Returns the output array, or a tuple when there are several; the run's
        statistics (kernels with their devices, copies) are in ``last_stats``.
        """
        outputs, raw = self._artifact.run(self._arrays(args, inputs), record_stats)
        self.last_stats = _stats(raw)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


def load(path, threads=0):
    """Loads an artifact directory; raises ``sy.RuntimeError`` naming the file at fault."""
    return Module(_rt.Artifact.load(_os.fspath(path), threads))


__all__ = ["load", "Module", "RunStats", "KernelRecord", "CopyRecord"]
