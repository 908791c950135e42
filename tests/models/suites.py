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
