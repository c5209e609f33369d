#!/usr/bin/env python3
"""Compiles every C++ code block of README.md and docs/*.md, and every example in the public
headers' comments, so that no snippet can go stale.

Each ```cpp block becomes code in a translation unit (one per Markdown file), compiled with
-fsyntax-only -Wall -Wextra -Werror (unused names aside) against include/ and the CUDA toolkit's
headers; #line directives make the compiler's errors point into the Markdown file. A block that
defines `main` is a translation unit of its own. Any other block is a list of statements: its
leading #include and `using` lines go to the top of the unit, the rest into the body of a
function, in a namespace of its own, after `using namespace cudacore;` and the usual standard
headers.

Markers, in an HTML comment on the line just before the block (invisible once rendered):
  <!-- snippet-params: Stream stream, Buffer data -->   names the snippet uses but does not
                                                         declare: they become the function's
                                                         parameters
  <!-- snippet-skip: REASON -->                          not compiled; the reason is required
                                                         and printed

In a header (include/cudacore/*.hpp) an example is a Doxygen code block: `///` lines indented by
four more spaces, after an empty `///` line. What a marker would say of it is in
scripts/header-snippets.txt instead. The headers' statement blocks share one unit.

    scripts/check-doc-snippets.py [--cxx g++] [--jobs N] [--keep DIR] [FILES...]
Exits 1 when a snippet does not compile, or a block has a marker without a reason.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PRELUDE = """#include <cudacore/cudacore.hpp>
#include <array>
#include <cassert>
#include <cstddef>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>
"""

# Every unit starts with the prelude, which is most of each unit's compile time: it is
# precompiled once (prelude.hpp.gch beside the units) and each unit includes it first. Where the
# precompiled header cannot be used, GCC reads prelude.hpp itself: the same code, only slower.
USE_PRELUDE = '#include "prelude.hpp"\n'

FENCE = re.compile(r"^\s*```(\S*)\s*$")
MARKER = re.compile(r"^<!--\s*snippet-(params|skip):(.*?)-->\s*$")
HEADER_LINE = re.compile(r"^\s*(#include\b|using namespace\b)")


class Block:
    def __init__(self, path, line, text, params, skip):
        self.path, self.line, self.text, self.params, self.skip = path, line, text, params, skip


def blocks_of(path):
    """The C++ blocks of one Markdown file, with the markers before them."""
    lines = open(path, encoding="utf-8").read().split("\n")
    found, i, problems = [], 0, []
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        lang, start = m.group(1).lower(), i
        i += 1
        body = []
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i])
            i += 1
        i += 1
        if lang not in ("cpp", "c++", "cxx"):
            continue
        params, skip = "", None
        marker = MARKER.match(lines[start - 1]) if start > 0 else None
        if marker:
            kind, value = marker.group(1), marker.group(2).strip()
            if kind == "skip":
                if not value:
                    problems.append(f"{path}:{start}: snippet-skip needs a reason")
                skip = value
            else:
                params = value
        # The block's first line is start + 2 (1-based, after the fence).
        found.append(Block(path, start + 2, body, params, skip))
    return found, problems


HEADER_CODE = re.compile(r"^\s*/// {5}(.*)$")
HEADER_EMPTY = re.compile(r"^\s*///\s*$")
HEADER_NOTES = os.path.join("scripts", "header-snippets.txt")


def header_notes():
    """scripts/header-snippets.txt: {"array_copy.hpp#1": "params" or ("skip", reason)}."""
    notes = {}
    for line in open(os.path.join(ROOT, HEADER_NOTES), encoding="utf-8"):
        if line.strip() and not line.startswith("#"):
            key, _, value = line.partition(":")
            value = value.strip()
            notes[key.strip()] = ("skip", value[5:].strip()) if value.startswith("skip:") else value
    return notes


def header_blocks_of(path, notes):
    """The examples in one header's Doxygen comments (code indented four more spaces after an
    empty `///` line), with what scripts/header-snippets.txt says of each (entries used are
    removed from `notes`)."""
    lines = open(path, encoding="utf-8").read().split("\n")
    found, i, problems = [], 0, []
    while i < len(lines):
        if not (HEADER_CODE.match(lines[i]) and i > 0 and HEADER_EMPTY.match(lines[i - 1])):
            i += 1
            continue
        start, body = i, []
        # The block runs on over empty comment lines that more code follows.
        while i < len(lines) and (HEADER_CODE.match(lines[i]) or (
                HEADER_EMPTY.match(lines[i]) and i + 1 < len(lines)
                and HEADER_CODE.match(lines[i + 1]))):
            code = HEADER_CODE.match(lines[i])
            body.append(code.group(1) if code else "")
            i += 1
        note = notes.pop(f"{os.path.basename(path)}#{len(found) + 1}", "")
        params, skip = (note, None) if isinstance(note, str) else ("", note[1])
        if skip == "":
            problems.append(f"{HEADER_NOTES}: {os.path.basename(path)}#{len(found) + 1}: "
                            "skip needs a reason")
        found.append(Block(path, start + 1, body, params, skip))
    return found, problems


def unit_for_main(block, rel):
    return USE_PRELUDE + f'#line {block.line} "{rel}"\n' + "\n".join(block.text) + "\n"


def unit_for_statements(blocks):
    """One translation unit for statement snippets: their #include lines on top, a function each."""
    head, parts = [], []
    for n, block in enumerate(blocks):
        if block.path.endswith(".hpp"):  # a header's example uses that header
            head.append(f'#include "{os.path.relpath(block.path, "include")}"')
        body_start = 0
        for k, line in enumerate(block.text):
            if HEADER_LINE.match(line) or not line.strip():
                if line.strip():
                    head.append(f'#line {block.line + k} "{block.path}"\n{line}')
                body_start = k + 1
                continue
            break
        body = "\n".join(block.text[body_start:])
        parts.append(
            f"namespace snippet_{n} {{\nusing namespace cudacore;\n"
            f"[[maybe_unused]] void run({block.params}) {{\n"
            f'#line {block.line + body_start} "{block.path}"\n{body}\n}}\n}}\n')
    return USE_PRELUDE + "\n".join(head) + "\n" + "\n".join(parts)


def include_flags():
    # Other projects' headers are system headers: their warnings are not the snippets'.
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    flags = ["-I", os.path.join(ROOT, "include"), "-isystem", os.path.join(cuda, "include"),
             "-isystem", os.path.join(cuda, "include", "cccl")]
    # <cudacore/mpi.hpp> needs mpi.h: Open MPI's include folder, where it is installed, and its
    # C API only (as the build: MPI_CXX_SKIP_MPICXX).
    mpicxx = shutil.which("mpicxx")
    if mpicxx:
        out = subprocess.run([mpicxx, "--showme:incdirs"], capture_output=True, text=True)
        for folder in out.stdout.split():
            flags += ["-isystem", folder]
        flags += ["-DOMPI_SKIP_MPICXX=1", "-DMPICH_SKIP_MPICXX=1"]
    return flags


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*")
    parser.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--keep", help="write the translation units into this folder")
    args = parser.parse_args()
    headers = os.path.join("include", "cudacore")
    files = args.files or (["README.md"] + sorted(
        os.path.join("docs", f) for f in os.listdir(os.path.join(ROOT, "docs"))
        if f.endswith(".md")) + sorted(
        os.path.join(headers, f) for f in os.listdir(os.path.join(ROOT, headers))
        if f.endswith(".hpp")))
    os.chdir(ROOT)

    units, problems, skipped, total = [], [], [], 0
    header_statements = []  # every header's statement blocks: one unit for them all
    notes = header_notes()
    for rel in files:
        in_header = rel.endswith(".hpp")
        blocks, file_problems = header_blocks_of(rel, notes) if in_header else blocks_of(rel)
        problems += file_problems
        statements = header_statements if in_header else []
        for block in blocks:
            total += 1
            if block.skip is not None:
                skipped.append(f"{rel}:{block.line}: skipped: {block.skip}")
            elif any(re.match(r"\s*int\s+main\s*\(", line) for line in block.text):
                units.append((f"{rel}:{block.line}", unit_for_main(block, rel)))
            else:
                statements.append(block)
        if statements and not in_header:
            units.append((f"{rel} ({len(statements)} snippets)", unit_for_statements(statements)))
    if header_statements:
        units.append((f"{headers} ({len(header_statements)} snippets)",
                      unit_for_statements(header_statements)))
    if not args.files:
        problems += [f"{HEADER_NOTES}: {key}: no such example" for key in notes]

    folder = args.keep or tempfile.mkdtemp(prefix="doc-snippets-")
    os.makedirs(folder, exist_ok=True)
    # Warnings are errors: a reader copies a snippet into a build that has them on. Only unused
    # names are allowed (a snippet may declare what it would go on to use).
    flags = [args.cxx, "-std=c++20", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
             "-Wno-unused"] + include_flags()

    prelude = os.path.join(folder, "prelude.hpp")
    with open(prelude, "w", encoding="utf-8") as out:
        out.write(PRELUDE)
    subprocess.run([f for f in flags if f != "-fsyntax-only"] +
                   ["-x", "c++-header", prelude, "-o", prelude + ".gch"],
                   capture_output=True)

    def compile_unit(index_unit):
        index, (name, text) = index_unit
        source = os.path.join(folder, f"unit_{index}.cpp")
        with open(source, "w", encoding="utf-8") as out:
            out.write(text)
        result = subprocess.run(flags + [source], capture_output=True, text=True)
        return name, result.returncode, result.stderr

    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for name, rc, errors in pool.map(compile_unit, enumerate(units)):
            print(f"{'ok    ' if rc == 0 else 'FAILED'} {name}")
            if rc != 0:
                failed += 1
                sys.stdout.write(errors)
    for line in skipped + problems:
        print(line)
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    compiled = total - len(skipped)
    print(f"doc snippets: {total} blocks, {compiled} compiled in {len(units)} units, "
          f"{len(skipped)} skipped, {failed} unit(s) failed")
    return 1 if failed or problems else 0


if __name__ == "__main__":
    sys.exit(main())
