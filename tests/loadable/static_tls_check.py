"""Checks that a shared library can be opened with dlopen on a stock glibc: it needs no static
TLS (no STATIC_TLS flag in its dynamic section: initial-exec TLS would take static TLS, of which
glibc keeps only a small surplus for libraries opened later, and dlopen then fails with "cannot
allocate memory in static TLS block"), and its TLS segment stays small, since every thread of the
process carries it. Prints the numbers; exits 1 saying what is wrong.

    python3 static_tls_check.py LIBRARY [MOST_TLS_BYTES]
"""
import subprocess
import sys


def main(path, most_bytes):
    dynamic = subprocess.run(["readelf", "-dW", path], check=True, capture_output=True, text=True).stdout
    segments = subprocess.run(["readelf", "-lW", path], check=True, capture_output=True, text=True).stdout
    flags = [line for line in dynamic.splitlines() if "(FLAGS)" in line]
    static_tls = any("STATIC_TLS" in line for line in flags)
    tls = [line.split() for line in segments.splitlines() if line.split()[:1] == ["TLS"]]
    # TLS Offset VirtAddr PhysAddr FileSiz MemSiz Flg Align
    tls_bytes = int(tls[0][5], 16) if tls else 0
    print(f"{path}: TLS segment {tls_bytes} bytes (at most {most_bytes}), STATIC_TLS flag: "
          f"{'yes' if static_tls else 'no'}")
    failed = False
    if static_tls:
        print("error: the library uses initial-exec TLS (STATIC_TLS): dlopen may fail with "
              "\"cannot allocate memory in static TLS block\"; use the default TLS model")
        failed = True
    if tls_bytes > most_bytes:
        print(f"error: {tls_bytes} bytes of TLS in every thread; keep large per-thread state on the "
              "heap, reached through a small thread_local pointer")
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1024))
