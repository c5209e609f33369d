#!/usr/bin/env python3
"""The function-length check: no function (or lambda) in src/ and tools/ runs over 60 lines
unless the comment directly above it says why, in this form:

    // Long because: a flat table of every CUresult, one line each.
    const char* status_name(CUresult status) {

The reason is a line of that comment starting `// Long because:` followed by the reason (not
empty); the comment may hold other lines before or after it. "Directly above" means the `//`
lines that end on the line before the function's first line, where the first line is the one
Universal Ctags gives (the line of the function's name, or of a lambda's opening) or, when the
lines just above it are the rest of the declaration (a `template <...>` line, a return type on
its own line), the first of those. A function's extent (its first and last line, both counted)
comes from Universal Ctags (`ctags --output-format=json --fields=+ne --kinds-C++=f`), a real
C++ parser, not from counting braces here.

    python3 scripts/check-function-length.py              # lists every long function, exits 1
                                                          # on any without a reason
    python3 scripts/check-function-length.py --list       # every function over the limit, with
                                                          # its reason, exits 0
    python3 scripts/check-function-length.py --self-test  # checks this script on fixtures: a
                                                          # 61-line function fails without a
                                                          # reason and passes with one
"""
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
LIMIT = 60
FOLDERS = ["src", "tools"]
REASON = re.compile(r"^//\s*Long because:\s*\S")
# A line that may be part of a declaration above the line of its name: not blank, not a comment,
# not a preprocessor line, and not the end of a statement or block.
DECLARATION_PART = re.compile(r"^(?!//|#|/\*|\*)[^;{}]*[^;{}\s]$")


def functions(root, folders):
    """Yields (path, first line, last line, name) for each function and lambda ctags finds."""
    ctags = shutil.which("ctags")
    if ctags is None:
        sys.exit("check-function-length: Universal Ctags is missing (apt-get install universal-ctags)")
    found = subprocess.run(
        [ctags, "--output-format=json", "--fields=+ne", "--kinds-C++=f", "--languages=C++",
         "--map-C++=+.hpp", "--map-C++=+.cpp", "-R", "-f", "-"] + folders,
        cwd=root, check=True, capture_output=True, text=True).stdout
    for line in found.splitlines():
        tag = json.loads(line)
        if tag.get("_type") != "tag" or "end" not in tag:
            continue
        scope = tag.get("scope", "")
        name = f"{scope}::{tag['name']}" if scope else tag["name"]
        name = re.sub(r"__anon[0-9a-f]+", "(anonymous)", name)  # ctags' names of unnamed scopes
        yield tag["path"], tag["line"], tag["end"], name


def reason_above(lines, first):
    """The `// Long because:` line of the comment directly above the function whose name is on
    line `first` (1-based), or None."""
    i = first - 2  # 0-based index of the line above
    for _ in range(3):  # `template <...>` and a return type on lines of their own
        if i >= 0 and DECLARATION_PART.match(lines[i].strip()):
            i -= 1
    while i >= 0 and lines[i].strip().startswith("//"):
        if REASON.match(lines[i].strip()):
            return lines[i].strip()
        i -= 1
    return None


def check(root, folders):
    """Returns (every long function as (path, line, length, name, reason)) for the tree at root."""
    texts = {}
    long_ones = []
    for path, first, last, name in functions(root, folders):
        length = last - first + 1
        if length <= LIMIT:
            continue
        if path not in texts:
            texts[path] = (root / path).read_text(errors="replace").splitlines()
        long_ones.append((path, first, length, name, reason_above(texts[path], first)))
    return sorted(long_ones)


def report(long_ones, list_all):
    missing = [f for f in long_ones if f[4] is None]
    for path, line, length, name, reason in long_ones:
        if reason is None:
            print(f"{path}:{line}: {name} is {length} lines (over {LIMIT}) with no "
                  f"'// Long because:' comment above it")
        elif list_all:
            print(f"{path}:{line}: {name} is {length} lines: {reason}")
    print(f"{len(long_ones)} functions over {LIMIT} lines, {len(missing)} without a reason")
    return 1 if missing and not list_all else 0


def fixture(with_reason, body_lines):
    """A source file holding one function of 2 + body_lines lines."""
    head = "// Long because: a fixture of the check's own test.\n" if with_reason else ""
    body = "".join(f"    total += {i};\n" for i in range(body_lines))
    return ("namespace fixture {\n\n// Adds up.\n" + head +
            "int add_up(int total) {\n" + body + "    return total; }\n\n}  // namespace fixture\n")


def self_test():
    cases = [  # (what, with a reason, lines of the function, expected count without a reason)
        ("a 61-line function with no reason fails", False, 61, 1),
        ("a 61-line function with a reason passes", True, 61, 0),
        ("a 60-line function needs no reason", False, 60, 0),
    ]
    failures = 0
    for what, with_reason, length, expected in cases:
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder)
            (root / "src").mkdir()
            (root / "src" / "fixture.cpp").write_text(fixture(with_reason, length - 2))
            long_ones = check(root, ["src"])
            missing = sum(1 for f in long_ones if f[4] is None)
            measured = [f[2] for f in long_ones]
            ok = missing == expected and (measured == [length] if length > LIMIT else not measured)
            print(f"{'ok' if ok else 'FAILED'}: {what} (lengths over {LIMIT}: {measured}, "
                  f"without a reason: {missing})")
            failures += not ok
    return 1 if failures else 0


def main(argv):
    if "--self-test" in argv:
        return self_test()
    return report(check(ROOT, FOLDERS), "--list" in argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
