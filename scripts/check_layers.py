#!/usr/bin/env python3
"""Checks that no #include in src/ or python/src/ runs from a lower layer to
a higher one.

The layers, lowest first, are the static libraries of CMakeLists.txt: a
folder's files may include the folders of their own layer and of the layers
below it (DEPENDS, transitively), never one above, even where the header
alone would compile: the link order would then hide an upward dependency
until someone reused the lower layer on its own. Exits 1 listing every
upward include (file:line, the include, the two layers).

    /usr/bin/python3 scripts/check_layers.py [--root DIR]
"""
import argparse
import pathlib
import re
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]

# Layer -> (its folders, the layers it may include directly). A device
# kind's folder, src/targets/<kind>/, has a run-time half (the runtime
# layer: it never sees the compiler) and a compile-time half (the back end's).
LAYERS = {
    "runtime": (["runtime", "switchyard", "targets/runtime"], []),
    "ir": (["support", "ir"], ["runtime"]),
    "op": (["op"], ["ir"]),
    "text": (["text"], ["op"]),
    "interp": (["interp"], ["op"]),
    "transform": (["analysis", "transform"], ["text", "interp"]),
    "placement": (["placement"], ["transform"]),
    "kernel_ir": (["kernel_ir"], ["ir"]),
    "backend": (["backend", "targets/compiler"], ["placement", "kernel_ir"]),
    "frontend": (["frontend"], ["text", "interp"]),
    "pipeline": (["pipeline"], ["backend", "frontend"]),
    "driver": (["driver"], ["pipeline"]),
    "python": (["python"], ["pipeline"]),
}

# Known exceptions, each with its reason; the goal is none.
ALLOWED = {
    ("src/ir/retype.cc", "op/registry.h"):
        "reads the OpDef an interned Op points at (a declaration; nothing of sy_op is linked)",
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def reachable(layer, seen=None):
    seen = set() if seen is None else seen
    if layer not in seen:
        seen.add(layer)
        for dep in LAYERS[layer][1]:
            reachable(dep, seen)
    return seen


def folder_of(parts):
    """The LAYERS folder of a path's parts: its first, or for a target's
    file "targets/<half>" (None for a file of a target outside its halves)."""
    if parts[0] != "targets":
        return parts[0]
    return "targets/" + parts[2] if len(parts) > 3 else None


def layer_of_folder():
    return {folder: layer for layer, (folders, _) in LAYERS.items() for folder in folders}


def source_files(repo):
    for root, layer_folder in ((repo / "src", None), (repo / "python" / "src", "python")):
        for path in sorted(root.rglob("*")):
            if path.suffix in (".h", ".cc", ".in") and path.is_file():
                folder = layer_folder or folder_of(path.relative_to(root).parts)
                yield path, folder


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=pathlib.Path, default=REPO, help="the repository to check")
    repo = parser.parse_args().root.resolve()
    folders = layer_of_folder()
    problems = []
    for path, folder in source_files(repo):
        relative = str(path.relative_to(repo))
        if folder is None:
            problems.append(f"{relative}: a target's file outside its compiler/ and runtime/ halves")
            continue
        if folder not in folders:
            problems.append(f"{relative}: folder '{folder}' belongs to no layer (add it to LAYERS)")
            continue
        layer = folders[folder]
        allowed = reachable(layer)
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m or "/" not in m.group(1):
                continue  # a header of the same folder, or python/src's own
            target_folder = folder_of(m.group(1).split("/"))
            target = folders.get(target_folder)
            if target is None or target in allowed or (relative, m.group(1)) in ALLOWED:
                continue
            problems.append(f"{relative}:{number}: includes \"{m.group(1)}\": layer '{layer}' "
                            f"may not include layer '{target}', which is above it or beside it")
    for problem in problems:
        print(problem)
    print(f"layers: {len(problems)} upward include{'s' if len(problems) != 1 else ''}, "
          f"{len(ALLOWED)} allowed exception{'s' if len(ALLOWED) != 1 else ''}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
