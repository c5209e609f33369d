#!/usr/bin/env python3
"""The layer check: every #include in src/ and include/cudacore/ stays in its layer or goes to one
the layer may use (src/layers.txt, the one statement of the layers), the layers' graph has no
cycle, the public headers include each other without cycles, every
source file listed in src/sources.cmake sits in the folder of the list that names it, and the
table of docs/layout.md names the layers in the file's order with the layers each uses.

A public header belongs to the layer whose src/ folder (or a folder inside it) holds its .cpp of
the same name, or to the one PUBLIC_HEADER_LAYERS gives. Includes that run against the graph are listed in
KNOWN_VIOLATIONS until they are removed: that list may only shrink (a listed include that is gone
fails the check, so the list stays true), and any other one fails it.

    python3 scripts/check-layers.py [--layers FILE]   # prints each violation, exits 1 on any new one

--layers checks against another statement of the layers than src/layers.txt (the tests' fixtures).
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
LAYERS_FILE = ROOT / "src" / "layers.txt"


def read_layers(path=LAYERS_FILE):
    """{layer: [layers it uses directly]}, in the file's order (lowest first)."""
    layers = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, used = line.partition(":")
        if not sep or not re.fullmatch(r"[a-z]+", name.strip()):
            sys.exit(f"check-layers: {path}:{number}: expected 'layer: used ...', got {line!r}")
        layers[name.strip()] = used.split()
    for name, used in layers.items():
        for other in used:
            if other not in layers:
                sys.exit(f"check-layers: {path}: {name} uses '{other}', which is no layer there")
    return layers


def may_use(layers):
    """{layer: the layers it may use}: those it names and, through them, what they may use."""
    allowed = {}
    for name in layers:
        seen, todo = set(), list(layers[name])
        while todo:
            other = todo.pop()
            if other not in seen:
                seen.add(other)
                todo.extend(layers[other])
        seen.discard(name)
        allowed[name] = seen
    return allowed


def layer_cycles(layers):
    """The cycles of the layers' graph (none is allowed), and each use of a layer listed later in
    the file (which lists the lowest layers first)."""
    problems = []
    order = list(layers)
    for name, used in layers.items():
        for other in used:
            if order.index(other) > order.index(name):
                problems.append(f"{name} uses {other}, listed after it: the file lists the "
                                f"lowest layers first")
    allowed = may_use(layers)
    for name in layers:
        looped = sorted(o for o in allowed[name] if name in allowed[o] and o != name)
        if looped:
            problems.append(f"{name} is in a cycle of layers with {', '.join(looped)}")
    return problems


LAYER_USES = read_layers()
MAY_USE = may_use(LAYER_USES)

# Public headers with no .cpp of their name in src/.
PUBLIC_HEADER_LAYERS = {
    "cudacore": None,  # the umbrella header: includes every layer, included by none
    "cccl": "memory",
    "cancellation": "code",  # the token a compile's options carry
    "cccl_thrust_allocator": "memory",  # header-only, as cccl.hpp
    "compile_errors": "errors",  # part of the hierarchy of errors.hpp (src/errors/errors.cpp)
    # The options of the compile entry points, Program::compile's among them (a cache only by
    # pointer, forward-declared).
    "compile_options": "code",
    "compiler_flags": "code",  # defined in src/code/program_options.cpp and its neighbours
    "pinned_memory_resource": "memory",  # the deprecated name of LegacyPinnedMemoryResource
    "device_property_list": "runtime",
    "device_scope": "runtime",
    "graph_conditional": "graph",
    "graph_node": "graph",
    "graph_update_error": "graph",  # defined in src/graph/graph_exec.cpp
    "kernel_arguments": "graph",  # KernelArguments is defined in src/graph/graph_node_params.cpp
    "ipc": "ipc",
    "launch_config": "runtime",
    "mdspan": "interop",
    "memory_location": "memory",
    "mpi": "mpi",
    "mpi_compile": "mpi",
    "mpi_devices": "mpi",
    "mpi_transfer": "mpi",
    "version": "support",
    "tracing_handles": "support",  # defined in src/support/tracing.cpp, beside the domains it reads
    "forward": "errors",
    "owning_handle": "errors",
}

# Folders inside a layer that the rest of the library reaches through one header: outside the
# layer's own folder, an include of the folder names that header alone.
DOORS = {
    # Keep it until the GPU is done: buffers, arrays, textures, graphs, pools and launches use
    # one API (docs/design/release.md); its parts are the runtime's own.
    "runtime/release/": "runtime/release/release.hpp",
}

# "file -> included" pairs that run against the graph, listed until they go (none today).
KNOWN_VIOLATIONS = set(
    line.strip() for line in (ROOT / "scripts" / "layer-violations.txt").read_text().splitlines()
    if line.strip() and not line.startswith("#"))

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def public_layer(name):
    if name in PUBLIC_HEADER_LAYERS:
        return PUBLIC_HEADER_LAYERS[name]
    # The .cpp may sit in a folder of its layer (src/cache/disk/disk_program_cache.cpp).
    matches = sorted(ROOT.glob(f"src/*/**/{name}.cpp"))
    if not matches:
        sys.exit(f"check-layers: include/cudacore/{name}.hpp has no layer: add it to "
                 f"PUBLIC_HEADER_LAYERS or give it a src/<layer>/{name}.cpp")
    return matches[0].relative_to(ROOT / "src").parts[0]


def layer_of_include(target):
    """The layer an include line names, or None for one outside the library."""
    if target.startswith("cudacore/"):
        return public_layer(pathlib.PurePosixPath(target).stem)
    first = target.split("/", 1)[0]
    return first if first in LAYER_USES and "/" in target else None


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


def layout_table_problems():
    """docs/layout.md's table of folders against src/layers.txt: the same layers, in the same
    order, each with the layers it uses."""
    text = (ROOT / "docs" / "layout.md").read_text()
    rows = re.findall(r"^\| `src/([a-z]+)` \| ([^|]*) \|", text, re.M)
    table = [(name, [u for u in uses.replace("`", "").replace(",", " ").split() if u != "-"])
             for name, uses in rows]
    expected = [(name, used) for name, used in LAYER_USES.items()]
    if table == expected:
        return []
    problems = ["docs/layout.md: the table of folders must list src/layers.txt's layers in its "
                "order, each with the layers it uses:"]
    for (name, used), row in zip(expected, table + [None] * len(expected)):
        if row != (name, used):
            problems.append(f"  expected | `src/{name}` | {', '.join(f'`{u}`' for u in used) or '-'} |"
                            f", found {row and '| `src/' + row[0] + '` | ' + ', '.join(row[1])}")
    return problems


def main():
    global LAYER_USES, MAY_USE
    if sys.argv[1:2] == ["--layers"] and len(sys.argv) == 3:
        LAYER_USES = read_layers(pathlib.Path(sys.argv[2]))
        MAY_USE = may_use(LAYER_USES)
    elif sys.argv[1:]:
        sys.exit("usage: check-layers.py [--layers FILE]")
    violations = []
    misplaced = []
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
            if own not in LAYER_USES:
                continue
        for target in INCLUDE.findall(path.read_text(errors="replace")):
            layer = layer_of_include(target)
            if layer is not None and layer != own and layer not in MAY_USE.get(own, ()):
                violations.append(f"{rel} -> {target}")
            for folder, door in DOORS.items():
                if (target.startswith(folder) and target != door and
                        not rel.startswith("src/" + folder.split("/")[0] + "/")):
                    misplaced.append(f"{rel} includes {target}: outside "
                                     f"src/{folder.split('/')[0]}, {folder} is used through {door}")

    listed = re.findall(r"set\(CUDACORE_(\w+)_SOURCES\s+([^)]*)\)",
                        (ROOT / "src" / "sources.cmake").read_text())
    for name, sources in listed:
        for source in sources.split():
            folder = source.split("/")[1] if source.startswith("src/") else None
            if folder != name.lower():
                misplaced.append(f"src/sources.cmake: {source} is listed under "
                                 f"CUDACORE_{name}_SOURCES")

    violations += [f"cycle: {' '.join(cycle)}" for cycle in public_cycles()]
    misplaced += [f"src/layers.txt: {problem}" for problem in layer_cycles(LAYER_USES)]
    misplaced += layout_table_problems()
    new = [v for v in violations if v not in KNOWN_VIOLATIONS]
    gone = sorted(KNOWN_VIOLATIONS - set(violations))
    for v in new:
        print(f"layer violation: {v}" + ("" if v.startswith("cycle:") else
                                          " (an include of a layer this one may not use: "
                                          "src/layers.txt)"))
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
