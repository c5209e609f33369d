#!/usr/bin/env python3
"""The path check: every file or folder of the repository that README.md or a page under docs/
names exists, so that no page points at a file that moved; and the same for the comments of the
sources under src/ and include/ (`//` comments: a comment naming a file that moved misleads as a
page does).

What counts as a named path:
  - a relative Markdown link, [text](../examples/tracing.cpp), resolved from the page's folder;
  - a path written in the text that starts at a top folder of the repository
    (src/memory/buffer.cpp, include/cudacore/stream.hpp, tests/cpu/..., scripts/fuzz.sh);
  - a source file named from inside src/ or include/ without the prefix, as the design pages
    write them (memory/buffer.cpp, runtime/release/release.hpp): it must exist under src/,
    include/ or include/cudacore/.
A program named by its build name (bench/tracing_bench) exists when its source does
(bench/tracing_bench.cpp). Paths with placeholders (<layer>, NAME, *, {a,b}, ...), build outputs
(build/...) and paths inside fenced code blocks (commands and code, often on the reader's own
tree) are not paths of the repository and are left alone.

    scripts/check-doc-paths.py              # prints each missing path, exits 1 on any
    scripts/check-doc-paths.py --self-test  # checks this script on fixtures: a page naming a
                                            # missing file fails, one naming existing ones passes
"""
import pathlib
import re
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
TOP_FOLDERS = ("src", "include", "tests", "bench", "examples", "scripts", "fuzz", "tools", "docs",
               "cmake", "packaging")
# Folders of src/ (the layers) and of include/: a path starting with one of them and ending in a
# source file's extension is a source file named from inside src/ or include/.
SOURCE_EXTENSIONS = (".cpp", ".hpp", ".h", ".cu", ".cuh", ".py", ".sh", ".cmake", ".md", ".txt")
LINK = re.compile(r"\]\(([^)\s]+)\)")
WORD = re.compile(r"(?<![\w./<>$*-])([A-Za-z_][\w.+*<>{}$-]*(?:/[\w.+*<>{}$-]+)+/?)")
PLACEHOLDER = re.compile(r"[<>*{}$]|\.\.\.|(?:^|/)[A-Z][A-Z_]+(?:[./]|$)")


def pages(root):
    found = [root / "README.md"] if (root / "README.md").exists() else []
    return found + sorted((root / "docs").rglob("*.md")) if (root / "docs").exists() else found


def sources(root):
    """The library's sources and public headers, whose comments are read as pages are."""
    found = []
    for base in ("src", "include"):
        if (root / base).is_dir():
            found += sorted(p for p in (root / base).rglob("*") if p.suffix in (".cpp", ".hpp", ".h", ".inc"))
    return found


def comment_text(text):
    """The `//` comments of a source, each on its own line number (code lines left empty)."""
    lines = []
    for line in text.splitlines():
        at = line.find("//")
        # A "//" inside a string literal ("http://...") is not a comment: skip lines whose text
        # before it holds an odd number of quotes.
        lines.append(line[at + 2:] if at >= 0 and line[:at].count('"') % 2 == 0 else "")
    return "\n".join(lines)


def inner_folders(root):
    """The first components a path inside src/ or include/ may start with."""
    names = set()
    for base in ("src", "include"):
        if (root / base).is_dir():
            names.update(p.name for p in (root / base).iterdir() if p.is_dir())
    return names


def exists(root, path):
    return (root / path).exists() or (root / (path + ".cpp")).is_file()


def named_paths(text):
    """(line number, path, is a link) for each path-like word and relative link of a page."""
    in_fence = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        for match in LINK.finditer(line):
            target = match.group(1).split("#")[0]
            if target and not re.match(r"^[a-z]+:", target):
                yield number, target, True
        for match in WORD.finditer(LINK.sub("]", line)):
            yield number, match.group(1).rstrip("."), False


def check(root, counted=None):
    """The (page, line, path) of every named path that does not exist; `counted`, a list, gets
    every path checked."""
    folders = inner_folders(root)
    missing = []
    counted = [] if counted is None else counted
    texts = [(page, page.read_text(encoding="utf-8")) for page in pages(root)]
    texts += [(source, comment_text(source.read_text(encoding="utf-8", errors="replace"))) for source in sources(root)]
    for page, text in texts:
        for number, path, is_link in named_paths(text):
            if PLACEHOLDER.search(path):
                continue
            first = path.split("/")[0]
            if is_link:
                found = (page.parent / path).exists()
            elif first in TOP_FOLDERS:
                found = exists(root, path)
            elif first in folders and path.endswith(SOURCE_EXTENSIONS):
                found = any(exists(root, base + path) for base in ("src/", "include/", "include/cudacore/"))
            else:
                continue  # not a path of the repository ("and/or", a URL's tail)
            counted.append(path)
            if not found:
                missing.append((page, number, path))
    return missing


def report(root, missing, counted):
    for page, number, path in missing:
        print(f"{page.relative_to(root)}:{number}: names {path}, which does not exist")
    print(f"doc paths: {len(counted)} named, {len(missing)} missing")
    return 1 if missing else 0


def self_test():
    cases = [  # (what, page text, expected missing paths)
        ("a page naming files that exist passes",
         "See `src/memory/buffer.cpp`, memory/buffer.hpp, the bench/a_bench program and\n"
         "[the example](../../examples/a.cpp).\n", []),
        ("a moved source file fails",
         "Lives in `src/runtime/buffer.cpp`.\n", ["src/runtime/buffer.cpp"]),
        ("a moved file named from inside src/ fails",
         "See runtime/deferred_release.cpp.\n", ["runtime/deferred_release.cpp"]),
        ("a broken relative link fails", "[gone](../examples/gone.cpp)\n", ["../examples/gone.cpp"]),
        ("a source's comment naming a moved file fails",
         None, ["memory/gone.hpp"]),
        ("placeholders and build outputs are not paths",
         "src/<layer>/NAME.cpp, tests/cpu/*.cpp, build/tests/x, src/memory/... pass,\n"
         "```sh\ncudacore bundle src/kernels/reduce.cu\n```\n", []),
    ]
    failures = 0
    for what, text, expected in cases:
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder)
            for path in ("src/memory/buffer.cpp", "src/runtime/stream.cpp", "include/cudacore/x.hpp",
                         "examples/a.cpp", "bench/a_bench.cpp"):
                (root / path).parent.mkdir(parents=True, exist_ok=True)
                (root / path).write_text("")
            (root / "src/memory/buffer.hpp").write_text("")
            (root / "docs/design").mkdir(parents=True)
            (root / "docs/design/page.md").write_text(text if text is not None else "")
            if text is None:
                (root / "src/memory/buffer.cpp").write_text(
                    '#include "memory/buffer.hpp"  // see memory/gone.hpp\nconst char* u = "http://a/b.cpp";\n')
            found = [path for _, _, path in check(root)]
            ok = found == expected
            print(f"{'ok' if ok else 'FAILED'}: {what} (missing: {found})")
            failures += not ok
    return 1 if failures else 0


def main(argv):
    if "--self-test" in argv:
        return self_test()
    counted = []
    return report(ROOT, check(ROOT, counted), counted)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
