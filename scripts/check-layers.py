#!/usr/bin/env python3
"""The layer check: every #include in src/ and include/cudacore/ goes to the same layer or one
below (the design's order, LAYERS below), the public headers include each other without cycles,
and every source file listed in src/sources.cmake sits in the folder of the list that names it.

A public header belongs to the layer of the src/ folder that holds its .cpp of the same name, or
to the one PUBLIC_HEADER_LAYERS gives. Includes that run back up are listed in KNOWN_VIOLATIONS
until they are removed: that list may only shrink (a listed include that is gone fails the check,
so the list stays true), and any other one fails it.

    python3 scripts/check-layers.py        # prints each violation, exits 1 on any new one
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# The design's layers, lowest first; layers sharing a rank may include each other. Views and
# interop use buffers (memory) and each other (a strided view reads DLPack, OpenGL maps into CUDA
# arrays); nothing at rank 6 uses them. Crossings define what lower layers declare and need
# everything below to do it (docs/layout.md, "How the layers meet").
LAYERS = {
    "support": 1, "errors": 1,
    "loader": 2,
    "code": 3, "headers": 3,
    "cache": 4,
    "runtime": 5,
    "memory": 6, "graph": 6, "ipc": 6,
    "views": 7, "interop": 7,
    "crossings": 8,
    "mpi": 9,
}

# Public headers with no .cpp of their name in src/.
PUBLIC_HEADER_LAYERS = {
    "cudacore": None,  # the umbrella header: includes every layer, included by none
    "cccl": "memory",
    "compile_options": "cache",
    "device_property_list": "runtime",
    "device_scope": "runtime",
    "graph_conditional": "graph",
    "graph_node": "graph",
    "ipc": "ipc",
    "launch_config": "runtime",
    "mdspan": "views",
    "memory_location": "memory",
    "mpi": "mpi",
    "program_cache": "cache",
    "version": "support",
}

# "file -> included" pairs that run back up, listed until they go (none today: a call that a
# lower layer declares and only a higher one can define is defined in src/crossings, which
# scripts/check-layer-symbols.py checks at symbol level).
KNOWN_VIOLATIONS = set(
    line.strip() for line in (ROOT / "scripts" / "layer-violations.txt").read_text().splitlines()
    if line.strip() and not line.startswith("#"))

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def public_layer(name):
    if name in PUBLIC_HEADER_LAYERS:
        return PUBLIC_HEADER_LAYERS[name]
    matches = sorted(ROOT.glob(f"src/*/{name}.cpp"))
    if not matches:
        sys.exit(f"check-layers: include/cudacore/{name}.hpp has no layer: add it to "
                 f"PUBLIC_HEADER_LAYERS or give it a src/<layer>/{name}.cpp")
    return matches[0].parent.name


def layer_of_include(target):
    """The layer an include line names, or None for one outside the library."""
    if target.startswith("cudacore/"):
        return public_layer(pathlib.PurePosixPath(target).stem)
    first = target.split("/", 1)[0]
    return first if first in LAYERS and "/" in target else None


def public_cycles():
    """The include cycles among the public headers (strongly connected components), each sorted."""
    graph = {}
    for path in ROOT.glob("include/cudacore/*.hpp"):
        graph[path.name] = [t.split("/", 1)[1] for t in INCLUDE.findall(path.read_text())
                            if t.startswith("cudacore/")]
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(node):  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, []):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(cycles)


def main():
    violations = []
    files = sorted(ROOT.glob("include/cudacore/*.hpp")) + sorted(
        p for p in ROOT.glob("src/*/**/*") if p.suffix in (".hpp", ".cpp", ".inc"))
    for path in files:
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("include/"):
            own = public_layer(path.stem)
            if own is None:
                continue
        else:
            own = rel.split("/")[1]
            if own not in LAYERS:
                continue
        for target in INCLUDE.findall(path.read_text(errors="replace")):
            layer = layer_of_include(target)
            if layer is not None and LAYERS[layer] > LAYERS[own]:
                violations.append(f"{rel} -> {target}")

    listed = re.findall(r"set\(CUDACORE_(\w+)_SOURCES\s+([^)]*)\)",
                        (ROOT / "src" / "sources.cmake").read_text())
    misplaced = []
    for name, sources in listed:
        for source in sources.split():
            folder = source.split("/")[1] if source.startswith("src/") else None
            if folder != name.lower():
                misplaced.append(f"src/sources.cmake: {source} is listed under "
                                 f"CUDACORE_{name}_SOURCES")

    violations += [f"cycle: {' '.join(cycle)}" for cycle in public_cycles()]
    new = [v for v in violations if v not in KNOWN_VIOLATIONS]
    gone = sorted(KNOWN_VIOLATIONS - set(violations))
    for v in new:
        print(f"layer violation: {v}" + ("" if v.startswith("cycle:") else
                                          " (an include from a lower layer to a higher one)"))
    for m in misplaced:
        print(f"layer violation: {m}")
    for g in gone:
        print(f"check-layers: '{g}' no longer happens: remove it from scripts/layer-violations.txt")
    known = len(violations) - len(new)
    print(f"check-layers: {len(files)} files, {len(new) + len(misplaced)} new violations, "
          f"{known} known ones still to remove (scripts/layer-violations.txt)")
    return 1 if new or misplaced or gone else 0


if __name__ == "__main__":
    sys.exit(main())
