#!/usr/bin/env python3
"""The layer check at symbol level: no layer's objects reference a symbol that only a higher
layer defines. scripts/check-layers.py sees include lines; this sees what the linker joins, so a
function declared in a lower layer and defined in a higher one (which no include shows) fails.

Each layer of src/sources.cmake is an object library of its own; the build writes which objects
each layer has to cudacore-layer-objects.txt in the build folder (one "layer<TAB>object" line per
object). For every object, `nm` lists the symbols it defines and those it references:

- a layer's own definitions are its strong global ones (nm types T, D, B, R, G, S, C, i); weak
  and COMDAT definitions (W, V, u: inline functions, templates, their static data) are made in
  every object that uses them and belong to no layer;
- a reference (U) is a violation when the symbol has strong definitions and all of them are in
  layers that the referencing object's layer may not use (src/layers.txt, read through
  scripts/check-layers.py). Symbols the library does not define (the C++ and C libraries, the
  toolkit's) are not its layers' business. A call that must run up goes through a hook the
  higher layer installs (docs/layout.md, "How the layers meet"), which no symbol shows.

    python3 scripts/check-layer-symbols.py [build/cudacore-layer-objects.txt] [--nm NM]

prints each violation (the referencing object, the symbol demangled, the layer defining it) and
exits 1 on any.
"""
import argparse
import collections
import concurrent.futures
import importlib.util
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

STRONG = set("TDBRGSCi")  # nm's types of a global, non-weak definition
WEAK = set("WVu")         # weak and unique (COMDAT) definitions: nobody's own


def layer_uses():
    """{layer: the layers it may use}, from src/layers.txt through scripts/check-layers.py."""
    spec = importlib.util.spec_from_file_location("check_layers", ROOT / "scripts" / "check-layers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.MAY_USE


def read_manifest(path):
    """[(layer, object path)] in the manifest's order."""
    objects = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        layer, sep, obj = line.partition("\t")
        if not sep or not obj:
            sys.exit(f"check-layer-symbols: {path}:{number}: expected 'layer<TAB>object', got {line!r}")
        objects.append((layer, pathlib.Path(obj)))
    return objects


def symbols_of(nm, obj):
    """(strong definitions, references) of one object file, as mangled names."""
    result = subprocess.run([nm, "--portability", str(obj)], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"check-layer-symbols: {nm} {obj} failed: {result.stderr.strip()}")
    defined, undefined = set(), set()
    for line in result.stdout.splitlines():
        fields = line.split()  # "name type [value size]" (POSIX format: names have no spaces)
        if len(fields) < 2:
            continue
        name, kind = fields[0], fields[1]
        if kind == "U":
            undefined.add(name)
        elif kind in STRONG:
            defined.add(name)
    return defined, undefined


def demangle(names):
    """Mangled name -> readable name (c++filt; the name itself where that is missing)."""
    names = sorted(names)
    try:
        result = subprocess.run(["c++filt"], input="\n".join(names) + "\n", capture_output=True,
                                text=True, check=True)
        readable = result.stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        readable = names
    return dict(zip(names, readable)) if len(readable) == len(names) else {n: n for n in names}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("manifest", nargs="?", default=str(ROOT / "build" / "cudacore-layer-objects.txt"),
                        help="the build's cudacore-layer-objects.txt")
    parser.add_argument("--nm", default="nm", help="the nm to run (the toolchain's)")
    args = parser.parse_args()
    args.nm = args.nm or "nm"  # CMake's CMAKE_NM is empty where it found none

    may_use = layer_uses()
    manifest = pathlib.Path(args.manifest)
    if not manifest.is_file():
        sys.exit(f"check-layer-symbols: {manifest} not found: configure the build first "
                 "(CMake writes it beside the library's objects)")
    objects = read_manifest(manifest)
    unknown = sorted({layer for layer, _ in objects if layer not in may_use})
    if unknown:
        sys.exit(f"check-layer-symbols: layer(s) {', '.join(unknown)} are not in src/layers.txt")
    missing = [str(obj) for _, obj in objects if not obj.is_file()]
    if missing:
        sys.exit(f"check-layer-symbols: {len(missing)} object(s) not built, first {missing[0]}: "
                 "build cudacore first")

    definers = collections.defaultdict(set)  # symbol -> layers with a strong definition
    references = []                            # (layer, object, undefined symbols)
    with concurrent.futures.ThreadPoolExecutor() as pool:  # one nm per object, side by side
        listed = list(pool.map(lambda entry: symbols_of(args.nm, entry[1]), objects))
    for (layer, obj), (defined, undefined) in zip(objects, listed):
        for name in defined:
            definers[name].add(layer)
        references.append((layer, obj, undefined))

    violations = []  # (layer, object, symbol, defining layers)
    for layer, obj, undefined in references:
        for name in sorted(undefined):
            layers = definers.get(name)
            if layers and all(d != layer and d not in may_use[layer] for d in layers):
                violations.append((layer, obj, name, sorted(layers)))

    readable = demangle({name for _, _, name, _ in violations})
    build_dir = manifest.resolve().parent
    for layer, obj, name, layers in violations:
        try:
            shown = obj.resolve().relative_to(build_dir)
        except ValueError:
            shown = obj
        print(f"layer violation: {shown} ({layer}) references {readable[name]}, "
              f"defined only in {', '.join(layers)} (a layer {layer} may not use: src/layers.txt)")
    print(f"check-layer-symbols: {len(objects)} objects in "
          f"{len({layer for layer, _ in objects})} layers, {len(violations)} violations")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
