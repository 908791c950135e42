"""The model sets that export_models.py and bench/peers/ know, by name.

"suite" is the five-model suite the tests and the quick peer check use
(model_zoo.py); "zoo" the 30-odd real networks of bench/zoo/
(zoo_models.py). Each module has MODELS (name -> (builder, input shape)),
build_model(name) and make_input(name); its exports live in a cache folder
of the set's own name.
"""
import importlib
import os
from pathlib import Path

MODULES = {"suite": "model_zoo", "zoo": "zoo_models"}


def models_of(suite):
    """The module that defines the set `suite`'s models."""
    return importlib.import_module(MODULES[suite])


def default_cache_dir(suite="suite"):
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    # Not switchyard/models: that is the kernel cache's folder of model.so objects.
    return Path(base) / "switchyard" / suite


def expand_names(spec, models):
    """The model names of a comma-separated list of names and groups (a
    module's GROUPS: name -> model names), in order, each once; ValueError
    naming the unknown ones."""
    groups = getattr(models, "GROUPS", {})
    names, unknown = [], []
    for item in (n for n in spec.split(",") if n):
        for name in groups.get(item, [item]):
            if name not in models.MODELS:
                unknown.append(name)
            elif name not in names:
                names.append(name)
    if unknown:
        known = ", ".join(list(models.MODELS) + [f"{g} (group)" for g in groups])
        raise ValueError(f"unknown model(s) {', '.join(unknown)}; known: {known}")
    return names
