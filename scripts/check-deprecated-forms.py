#!/usr/bin/env python3
"""Every deprecated public form still compiles and names its replacement: compiles
tests/support/deprecated_calls.cpp (which calls each old form once) with g++ and checks that the
compiler reports every `[[deprecated("...")]]` message of include/cudacore there, and no error.
A deprecated declaration the fixture does not call fails the check (add the call).

    python3 scripts/check-deprecated-forms.py [CUDA_HOME]
"""
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CUDA = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CUDA_HOME", "/usr/local/cuda"))
MPI_INCLUDE = "/usr/lib/x86_64-linux-gnu/openmpi/include"


def messages():
    """The text of every [[deprecated("...")]] in the public headers (string pieces joined)."""
    found = {}
    for header in sorted((ROOT / "include" / "cudacore").glob("*.hpp")):
        text = header.read_text()
        for match in re.finditer(r'\[\[deprecated\(((?:\s*"(?:[^"\\]|\\.)*")+)\s*\)\]\]', text):
            pieces = re.findall(r'"((?:[^"\\]|\\.)*)"', match.group(1))
            found["".join(pieces)] = header.name
    return found


def main():
    fixture = ROOT / "tests" / "support" / "deprecated_calls.cpp"
    command = ["g++", "-std=c++20", "-fsyntax-only", "-Wdeprecated-declarations", f"-I{ROOT / 'include'}",
               "-isystem", str(CUDA / "include"), "-isystem", MPI_INCLUDE, str(fixture)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        print(f"deprecated forms: {fixture.name} does not compile:\n{result.stderr}")
        return 1
    declared = messages()
    missing = [(text, header) for text, header in declared.items() if text not in result.stderr]
    for text, header in missing:
        print(f'deprecated forms: "{text}" ({header}) is never reported: call that form in {fixture.name}')
    print(f"deprecated forms: {len(declared) - len(missing)} of {len(declared)} deprecated "
          "declarations compile and name their replacement")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
