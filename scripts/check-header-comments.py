#!/usr/bin/env python3
"""The header-comment check: the public headers (include/cudacore) carry the contract, not essays.

  - a comment block (consecutive `//` lines) is under 20 lines, its example included;
  - a header's file comment (its first block) has at most 10 lines besides its one example (code
    indented four more spaces after an empty `///` line, as scripts/check-doc-snippets.py reads it);
  - a header is under 180 lines or over 200: one near the size limit says less rather than splits.
How a mechanism works, and why, goes to docs/design/ and the guides. The headers listed in
scripts/header-comment-exceptions.txt are not held to these rules yet; the list may only shrink
(a listed header that follows the rules fails the check until it leaves the list).

    scripts/check-header-comments.py              # prints each breach and the figures, exits 1 on any
    scripts/check-header-comments.py --self-test  # checks this script on fixtures
"""
import pathlib
import re
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXCEPTIONS = "scripts/header-comment-exceptions.txt"
MAX_BLOCK = 19
MAX_FILE_COMMENT = 10
NO_HEADER_BETWEEN = (180, 200)
COMMENT = re.compile(r"^\s*//")
EXAMPLE = re.compile(r"^\s*/// {5}")
EMPTY = re.compile(r"^\s*///\s*$")


def blocks(lines):
    """(first line index, lines) of each run of consecutive comment lines."""
    found, i = [], 0
    while i < len(lines):
        if COMMENT.match(lines[i]):
            start = i
            while i < len(lines) and COMMENT.match(lines[i]):
                i += 1
            found.append((start, lines[start:i]))
        else:
            i += 1
    return found


def example_lines(block):
    """How many lines of the block are its examples (with the empty lines inside them)."""
    count, inside = 0, False
    for k, line in enumerate(block):
        if EXAMPLE.match(line) and (inside or (k > 0 and EMPTY.match(block[k - 1]))):
            inside = True
            count += 1
        elif inside and EMPTY.match(line) and k + 1 < len(block) and EXAMPLE.match(block[k + 1]):
            count += 1
        else:
            inside = False
    return count


def breaches(path, text):
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    found = []
    all_blocks = blocks(lines)
    for start, block in all_blocks:
        if len(block) > MAX_BLOCK:
            found.append(f"{path}:{start + 1}: a comment block of {len(block)} lines "
                         f"(at most {MAX_BLOCK})")
    if all_blocks and all_blocks[0][0] == 0:
        prose = len(all_blocks[0][1]) - example_lines(all_blocks[0][1])
        if prose > MAX_FILE_COMMENT:
            found.append(f"{path}:1: a file comment of {prose} lines besides its example "
                         f"(at most {MAX_FILE_COMMENT})")
    low, high = NO_HEADER_BETWEEN
    if low <= len(lines) <= high:
        found.append(f"{path}: {len(lines)} lines (a header is under {low} lines or over {high})")
    return found, len(lines), sum(1 for line in lines if COMMENT.match(line))


def check(root):
    """(breaches, totals, totals without the listed headers, list problems)."""
    listed_path = root / EXCEPTIONS
    listed = set()
    if listed_path.exists():
        listed = {line.strip() for line in listed_path.read_text().splitlines()
                  if line.strip() and not line.startswith("#")}
    problems, totals, kept = [], [0, 0, 0], [0, 0, 0]
    seen = set()
    for header in sorted((root / "include").rglob("*")):
        if header.suffix not in (".hpp", ".inc"):
            continue
        rel = header.relative_to(root).as_posix()
        found, count, comments = breaches(rel, header.read_text(encoding="utf-8"))
        totals[0] += count
        totals[1] += comments
        totals[2] += 1
        if rel in listed:
            seen.add(rel)
            if not found:
                problems.append(f"{rel}: follows the rules: remove it from {EXCEPTIONS}")
            continue
        kept[0] += count
        kept[1] += comments
        kept[2] += 1
        problems += found
    problems += [f"{EXCEPTIONS}: {rel} is not a header" for rel in sorted(listed - seen)]
    return problems, totals, kept


def figures(name, totals):
    lines, comments, headers = totals
    share = 100.0 * comments / lines if lines else 0.0
    return f"{name}: {headers} headers, {lines} lines, {comments} comment lines ({share:.1f}%)"


def self_test():
    long_block = "".join(f"/// line {n}\n" for n in range(20))
    example = "///\n///     int a = 1;\n///\n///     int b = a;\n"
    cases = [  # (what, header text, listed, expected number of problems)
        ("a short header passes", "/// @file\n/// Short.\n#pragma once\n/// Does.\nvoid f();\n",
         False, 0),
        ("a file comment of 10 lines and an example passes",
         "/// @file\n" + "".join(f"/// {n}\n" for n in range(8)) + example + "#pragma once\n",
         False, 0),
        ("a file comment of 11 lines fails",
         "/// @file\n" + "".join(f"/// {n}\n" for n in range(10)) + "#pragma once\n", False, 1),
        ("a doc block of 20 lines fails", "#pragma once\n" + long_block + "void f();\n", False, 1),
        ("a header of 190 lines fails", "#pragma once\n" + "void f();\n" * 189, False, 1),
        ("a header of 201 lines passes", "#pragma once\n" + "void f();\n" * 200, False, 0),
        ("a listed header that breaks a rule passes", "#pragma once\n" + long_block, True, 0),
        ("a listed header that follows the rules fails", "#pragma once\nvoid f();\n", True, 1),
    ]
    failures = 0
    for what, text, listed, expected in cases:
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder)
            (root / "include/cudacore").mkdir(parents=True)
            (root / "include/cudacore/x.hpp").write_text(text)
            (root / "scripts").mkdir()
            (root / EXCEPTIONS).write_text("include/cudacore/x.hpp\n" if listed else "")
            problems, _, _ = check(root)
            ok = len(problems) == expected
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {what}" + ("" if ok else f": {problems}"))
    return 1 if failures else 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    problems, totals, kept = check(ROOT)
    for problem in problems:
        print(problem)
    print(figures("include/", totals))
    print(figures(f"include/ without {EXCEPTIONS}'s headers", kept))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
