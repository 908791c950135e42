#!/usr/bin/env python3
"""Checks that no #include in src/ or python/src/ runs from a lower layer to
a higher one, or from one device kind's folder into another's.

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
# layer: it never sees the compiler) and a compile-time half (the back
# end's); the files directly in src/targets/ are the code generator
# registry, one row per kind.
LAYERS = {
    "runtime": (["runtime", "switchyard", "targets/runtime"], []),
    "ir": (["support", "ir"], ["runtime"]),
    "op": (["op"], ["ir"]),
    "text": (["text"], ["op"]),
    "interp": (["interp"], ["op"]),
    "transform": (["analysis", "transform"], ["text", "interp"]),
    "placement": (["placement"], ["transform"]),
    "kernel_ir": (["kernel_ir"], ["ir"]),
    "codegen": (["codegen"], ["op", "kernel_ir"]),
    "toolchain": (["toolchain"], ["ir"]),
    # One layer (CMakeLists.txt says why): lowering reaches the targets'
    # generators through the registry, and their compiler halves run passes
    # over the lowered program.
    "backend": (["lower", "targets", "targets/compiler"], ["placement", "codegen", "toolchain"]),
    "layout": (["layout"], ["backend"]),
    "artifact": (["artifact"], ["backend"]),
    "frontend": (["frontend"], ["text", "interp"]),
    "pipeline": (["pipeline"], ["artifact", "layout", "frontend"]),
    "driver": (["driver"], ["pipeline"]),
    "python": (["python"], ["pipeline"]),
}

# Known exceptions, each with its reason; the goal is none.
ALLOWED = {
    ("src/ir/retype.cc", "op/registry.h"):
        "reads the OpDef an interned Op points at (a declaration; nothing of sy_op is linked)",
}

# The files outside src/targets/ that may name a device kind's folder: the
# registries, one row per kind. Any other code reaches a target through an
# interface the target implements (runtime's Device, TargetDescription,
# CodeGenerator), so a new kind is one folder plus registry rows.
TARGET_REGISTRIES = {
    "src/runtime/device_registry.cc": "the runtime's device registry: one row per kind makes its Device",
}

# Known includes of a target's files from outside src/targets/ (issue 34),
# each with its reason; the goal is none.
TARGET_LEAKS = {
    ("src/runtime/run_context.h", "targets/cpu/runtime/dnnl_primitive.h"):
        "a kernel's PlannedPrimitive holds the host's DnnlPrimitive beside a device's own "
        "DeviceLibraryPrimitive; removing it means the CPU device making its primitives through "
        "Device::make_library_primitive, with prepared weights, depthwise weights and the load's "
        "weight adoption behind that interface",
    ("src/runtime/artifact.cc", "targets/cpu/runtime/dnnl_primitive.h"):
        "makes the manifest's oneDNN primitives and prepares or adopts their weights at load; the "
        "same change as run_context.h's",
    ("src/codegen/library_epilogue.cc", "targets/cpu/runtime/primitive_post_ops.h"):
        "PostOpChain refuses oneDNN's repeated eltwise parameters for every anchor library, CUDA's "
        "included; an AnchorLibrary question would need CUDA's row to keep the same rule (or CUDA's "
        "fused epilogues may change), and a target may not include another's",
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
    """The LAYERS folder of a path's parts: its first; for a file directly in
    targets/, "targets" (the registry); for a target's file "targets/<half>"
    (None for a file of a target outside its halves)."""
    if parts[0] != "targets":
        return parts[0]
    if len(parts) == 2:
        return "targets"
    return "targets/" + parts[2] if len(parts) > 3 else None


def target_of(parts):
    """The device kind of a path inside src/targets/<kind>/, else None."""
    return parts[1] if parts[0] == "targets" and len(parts) > 2 else None


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
            included = m.group(1).split("/")
            if (relative, m.group(1)) in ALLOWED:
                continue
            own_kind, other_kind = target_of(path.relative_to(repo).parts[1:]), target_of(included)
            if own_kind and other_kind and own_kind != other_kind:
                problems.append(f"{relative}:{number}: includes \"{m.group(1)}\": target '{own_kind}' "
                                f"may not include target '{other_kind}' (share it from a target-neutral layer)")
                continue
            if (included[0] == "targets" and len(included) > 2 and not relative.startswith("src/targets/")
                    and relative not in TARGET_REGISTRIES and (relative, m.group(1)) not in TARGET_LEAKS):
                problems.append(f"{relative}:{number}: includes \"{m.group(1)}\": only a registry outside "
                                f"src/targets/ may name target '{other_kind}' (reach it through an interface "
                                f"it implements: Device, TargetDescription, CodeGenerator)")
                continue
            target = folders.get(folder_of(included))
            if target is None or target in allowed:
                continue
            problems.append(f"{relative}:{number}: includes \"{m.group(1)}\": layer '{layer}' "
                            f"may not include layer '{target}', which is above it or beside it")
    for problem in problems:
        print(problem)
    exceptions = len(ALLOWED) + len(TARGET_LEAKS)
    print(f"layers: {len(problems)} upward include{'s' if len(problems) != 1 else ''}, "
          f"{exceptions} allowed exception{'s' if exceptions != 1 else ''}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
