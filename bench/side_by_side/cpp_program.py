"""The C++ half: runs BUILD/bench/side_by_side (raw calls and cudacore) or reads its saved
output, and adds its JSON lines to the results."""

import json
import os
import subprocess
import time

from .harness import say


def run_cpp(args, results, environment):
    """Returns the C++ program's error (or why it did not run or finish), None when it ran."""
    timed_out = None
    if args.cpp_json:
        with open(args.cpp_json, encoding="utf-8") as f:
            lines = f.read().splitlines()
        say(f"C++ figures read from {args.cpp_json}")
    else:
        binary = None
        for candidate in ("bench/side_by_side", "side_by_side"):
            path = os.path.join(args.build_dir, candidate)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                binary = path
                break
        if binary is None:
            reason = (f"C++ program not found in {args.build_dir}/bench (build it: "
                      f"cmake --build {args.build_dir} --target side_by_side)")
            say("raw / cudacore: " + reason)
            return reason
        env = dict(os.environ)
        # The build tree may have moved since it was built: find libcudacore beside it.
        build = os.path.abspath(args.build_dir)
        extra = [build, os.path.join(build, "runtime-libs")]
        env["LD_LIBRARY_PATH"] = ":".join(extra + [p for p in [env.get("LD_LIBRARY_PATH")] if p])
        command = [binary] + (["--quick"] if args.quick else [])
        if args.only:
            command += ["--only", ",".join(sorted(args.only))]
        say("running " + " ".join(command))
        started = time.monotonic()
        try:
            done = subprocess.run(command, env=env, capture_output=True, text=True,
                                  timeout=args.cpp_timeout)
        except subprocess.TimeoutExpired as error:
            timed_out = f"C++ program ran past {args.cpp_timeout} s"
            say("raw / cudacore: " + timed_out)
            lines = (error.stdout or b"").decode(errors="replace").splitlines() \
                if isinstance(error.stdout, bytes) else (error.stdout or "").splitlines()
        else:
            lines = done.stdout.splitlines()
            if done.stderr.strip():
                say("C++ program stderr:\n" + done.stderr.rstrip())
            say(f"C++ program: exit status {done.returncode}, {time.monotonic() - started:.1f} s")
        if args.out:
            with open(os.path.join(args.out, "cpp.jsonl"), "w", encoding="utf-8") as f:
                f.write("\n".join(lines) + "\n")
    # The rows it printed before a time-out count; the others are skipped with the reason.
    error = timed_out
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            say(f"ignoring a line that is not JSON: {line[:120]}")
            continue
        if "environment" in record:
            environment.update(record["environment"])
        elif "error" in record:
            error = record["error"]
            say("C++ program error: " + error)
        elif "skipped" in record:
            results.skip(record["operation"], record["system"], record["skipped"])
        elif "median_ns" in record:
            results.add(record["operation"], record["system"], record["median_ns"],
                        record["repetitions"], record.get("note"))
    return error
