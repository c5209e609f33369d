#!/usr/bin/env python3
"""The layer check: every #include in src/ and include/cudacore/ stays in its layer or goes to one
the layer may use (src/layers.txt, the one statement of the layers), the layers' graph has no
cycle, the public headers include each other without cycles, every
source file listed in src/sources.cmake sits in the folder of the list that names it, and the
table of docs/layout.md names the layers in the file's order with the layers each uses.

A public header belongs to the layer of the src/ folder that holds its .cpp of the same name, or,
when it is header-only, to the one src/layers.txt names for it ("LAYER header-only: NAME ...").
Its code lives in that .cpp, or in files named after it (NAME_PART.cpp: a type's members that
need another layer, or a part of a large one): a function a public header declares that src/
defines in a file of another name fails the check, as does a header-only one with code in src/
(read with Universal Ctags). The umbrella header cudacore.hpp includes the others in the order of
the layers. Includes that run against the graph are listed in KNOWN_VIOLATIONS, and code in files
of another name in KNOWN_ELSEWHERE, until they are removed: those lists may only shrink (a listed
one that is gone fails the check, so the list stays true), and any other one fails it.

    python3 scripts/check-layers.py [--layers FILE | --tree DIR]   # prints each violation, exits 1 on any new one

--layers checks against another statement of the layers than src/layers.txt, --tree another tree
than this one (DIR/src, DIR/include/cudacore, DIR/docs/layout.md): the tests' fixtures.
"""
import json
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
LAYERS_FILE = ROOT / "src" / "layers.txt"


def read_layers(path=LAYERS_FILE):
    """{layer: [layers it uses directly]}, in the file's order (lowest first)."""
    return read_statement(path)[0]


def read_statement(path=LAYERS_FILE):
    """({layer: [layers it uses directly]} in the file's order, {header-only public header: its
    layer}) from a statement of the layers."""
    layers, header_only = {}, {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        owner, sep, headers = line.partition(" header-only:")
        if sep:
            if owner not in layers:
                sys.exit(f"check-layers: {path}:{number}: header-only headers of '{owner}', which "
                         f"is no layer listed above")
            for header in headers.split():
                if header in header_only:
                    sys.exit(f"check-layers: {path}:{number}: {header} is header-only in "
                             f"{header_only[header]} already")
                header_only[header] = owner
            continue
        name, sep, used = line.partition(":")
        if not sep or not re.fullmatch(r"[a-z]+", name.strip()):
            sys.exit(f"check-layers: {path}:{number}: expected 'layer: used ...', got {line!r}")
        layers[name.strip()] = used.split()
    for name, used in layers.items():
        for other in used:
            if other not in layers:
                sys.exit(f"check-layers: {path}: {name} uses '{other}', which is no layer there")
    return layers, header_only


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


LAYER_USES, HEADER_ONLY = read_statement()
MAY_USE = may_use(LAYER_USES)

# The umbrella header: includes every layer's headers, in the layers' order; included by none.
UMBRELLA = "cudacore"

# Folders inside a layer that the rest of the library reaches through one header: outside the
# layer's own folder, an include of the folder names that header alone.
DOORS = {
    # Keep it until the GPU is done: buffers, arrays, textures, graphs, pools and launches use
    # one API (docs/design/release.md); its parts are the runtime's own.
    "runtime/release/": "runtime/release/release.hpp",
}


def listed(name):
    """The lines of scripts/NAME that are not comments (none where the tree has no such file)."""
    path = ROOT / "scripts" / name
    if not path.exists():
        return set()
    return set(line.strip() for line in path.read_text().splitlines()
               if line.strip() and not line.startswith("#"))


# "file -> included" pairs that run against the graph, listed until they go (none today).
KNOWN_VIOLATIONS = listed("layer-violations.txt")
# "include/cudacore/NAME.hpp -> src/LAYER/FILE.cpp": code of a public header in a file of another
# name, listed until it moves.
KNOWN_ELSEWHERE = listed("header-code-elsewhere.txt")

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def own_sources(name):
    """The src/<layer>/.../NAME.cpp files of a public header."""
    return sorted(ROOT.glob(f"src/*/**/{name}.cpp"))


def public_layer(name):
    """The layer of include/cudacore/NAME.hpp: where its .cpp is, else where src/layers.txt puts
    it (None for the umbrella header)."""
    if name == UMBRELLA:
        return None
    matches = own_sources(name)
    if matches:
        return matches[0].relative_to(ROOT / "src").parts[0]
    if name in HEADER_ONLY:
        return HEADER_ONLY[name]
    sys.exit(f"check-layers: include/cudacore/{name}.hpp has no layer: give it a "
             f"src/<layer>/{name}.cpp or, header-only, a line 'LAYER header-only: {name}' in "
             f"src/layers.txt")


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


def header_only_problems():
    """src/layers.txt's header-only headers: each a public header, with no .cpp of its name."""
    problems = []
    for name, layer in sorted(HEADER_ONLY.items()):
        if not list((ROOT / "include" / "cudacore").glob(f"{name}.*")):
            problems.append(f"src/layers.txt: '{layer} header-only: {name}' names no "
                            f"include/cudacore/{name}.hpp (or .inc)")
        for source in own_sources(name):
            problems.append(f"src/layers.txt: {name} is listed header-only, but "
                            f"{source.relative_to(ROOT)} is its code (its layer comes from there)")
    return problems


def ctags_tags(paths, kinds):
    """Universal Ctags' C++ tags (qualified names) of `kinds` in `paths`."""
    ctags = shutil.which("ctags")
    if ctags is None:
        sys.exit("check-layers: Universal Ctags is missing (apt-get install universal-ctags)")
    out = subprocess.run([ctags, "--output-format=json", "--languages=C++", f"--kinds-C++={kinds}",
                          "--fields=+S", "--extras=+q", "-R", "-f-"] + [str(p) for p in paths],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def parameter_types(signature):
    """A signature without its parameters' names, defaults and spaces: a declaration's and its
    definition's are the same."""
    signature = re.sub(r"\s*=[^,()]*(\([^()]*\))?[^,()]*", "", signature or "")
    return re.sub(r"\s+", "", re.sub(r"\b\w+\s*(?=[,)])", "", signature))


def code_elsewhere():
    """{"include/cudacore/NAME.hpp -> src/...": message} for each file of src/ that defines
    a function a public header declares (outside `detail`: the internal calls
    that inline code makes, are defined where their layer is) and is not named after the header
    (NAME.cpp, NAME_PART.cpp), and for each header whose code has no NAME.cpp."""
    declared = {}
    for tag in ctags_tags(["include/cudacore"], "p"):
        name = tag["name"]
        if not name.startswith("cudacore::") or "detail::" in name:
            continue
        key = (name, parameter_types(tag.get("signature")))
        declared.setdefault(key, set()).add(pathlib.PurePosixPath(tag["path"]).stem)
    found = {}
    for tag in ctags_tags(["src"], "f"):
        key = (tag["name"], parameter_types(tag.get("signature")))
        for header in declared.get(key, ()):
            found.setdefault(header, {}).setdefault(tag["path"], []).append(tag["name"])
    problems = {}
    for header, files in sorted(found.items()):
        for path, names in sorted(files.items()):
            stem = pathlib.PurePosixPath(path).stem
            if stem != header and not stem.startswith(header + "_"):
                problems[f"include/cudacore/{header}.hpp -> {path}"] = (
                    f"include/cudacore/{header}.hpp's code is in {path}, a file of another name "
                    f"({', '.join(sorted(set(n.removeprefix('cudacore::') for n in names)))}): "
                    f"move it to src/<layer>/{header}.cpp or a {header}_<part>.cpp")
        if not own_sources(header):
            problems[f"include/cudacore/{header}.hpp -> no {header}.cpp"] = (
                f"include/cudacore/{header}.hpp has code in src/ ({', '.join(sorted(files))}) "
                f"but no src/<layer>/{header}.cpp: its layer cannot be seen from the tree")
    return problems


def umbrella_problems():
    """The umbrella header's includes in the order of the layers (lowest first)."""
    path = ROOT / "include" / "cudacore" / f"{UMBRELLA}.hpp"
    if not path.exists():
        return []
    order = list(LAYER_USES)
    previous = None
    for target in INCLUDE.findall(path.read_text()):
        layer = layer_of_include(target)
        if layer is None:
            continue
        if previous is not None and order.index(layer) < order.index(previous):
            return [f"include/cudacore/{UMBRELLA}.hpp includes {target} ({layer}) after a header "
                    f"of {previous}: it includes the layers in src/layers.txt's order"]
        previous = layer
    return []


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
    global ROOT, LAYER_USES, HEADER_ONLY, MAY_USE, KNOWN_VIOLATIONS, KNOWN_ELSEWHERE
    if sys.argv[1:2] == ["--layers"] and len(sys.argv) == 3:
        LAYER_USES, HEADER_ONLY = read_statement(pathlib.Path(sys.argv[2]))
        MAY_USE = may_use(LAYER_USES)
    elif sys.argv[1:2] == ["--tree"] and len(sys.argv) == 3:
        ROOT = pathlib.Path(sys.argv[2]).resolve()
        LAYER_USES, HEADER_ONLY = read_statement(ROOT / "src" / "layers.txt")
        MAY_USE = may_use(LAYER_USES)
        KNOWN_VIOLATIONS = listed("layer-violations.txt")
        KNOWN_ELSEWHERE = listed("header-code-elsewhere.txt")
    elif sys.argv[1:]:
        sys.exit("usage: check-layers.py [--layers FILE | --tree DIR]")
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

    sources_cmake = ROOT / "src" / "sources.cmake"
    lists = re.findall(r"set\(CUDACORE_(\w+)_SOURCES\s+([^)]*)\)",
                       sources_cmake.read_text() if sources_cmake.exists() else "")
    for name, sources in lists:
        for source in sources.split():
            folder = source.split("/")[1] if source.startswith("src/") else None
            if folder != name.lower():
                misplaced.append(f"src/sources.cmake: {source} is listed under "
                                 f"CUDACORE_{name}_SOURCES")

    violations += [f"cycle: {' '.join(cycle)}" for cycle in public_cycles()]
    misplaced += [f"src/layers.txt: {problem}" for problem in layer_cycles(LAYER_USES)]
    misplaced += layout_table_problems()
    misplaced += header_only_problems()
    misplaced += umbrella_problems()
    elsewhere = code_elsewhere()
    misplaced += [message for key, message in elsewhere.items() if key not in KNOWN_ELSEWHERE]
    gone_elsewhere = sorted(KNOWN_ELSEWHERE - set(elsewhere))
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
    for g in gone_elsewhere:
        print(f"check-layers: '{g}' no longer happens: remove it from "
              f"scripts/header-code-elsewhere.txt")
    known = len(violations) - len(new)
    known_elsewhere = len(KNOWN_ELSEWHERE) - len(gone_elsewhere)
    print(f"check-layers: {len(files)} files, {len(new) + len(misplaced)} new violations, "
          f"{known} known ones still to remove (scripts/layer-violations.txt), {known_elsewhere} "
          f"headers' code known in files of another name (scripts/header-code-elsewhere.txt)")
    return 1 if new or misplaced or gone or gone_elsewhere else 0


if __name__ == "__main__":
    sys.exit(main())
