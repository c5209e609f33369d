#!/usr/bin/env python3
"""bench/make_results.py on tests/bench/results_fixture (a gpu-check.sh bench output folder in
miniature): the page has the header, the side-by-side table, each Google Benchmark program's
ratio table, each table program's tables, the programs without a table, and the hand-kept
section; the logs are read from logs.tar.gz as gpu-check.sh writes them and from a folder."""

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(ROOT, "bench", "make_results.py")
FIXTURE = os.path.join(HERE, "results_fixture")


def generate(out, page, *extra):
    return subprocess.run([sys.executable, SCRIPT, out, "--commit", "abc1234", "--output", page,
                           *extra], capture_output=True, text=True, timeout=60)


class MakeResults(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="make-results-test-")
        self.page = os.path.join(self.work, "RESULTS.md")

    def tearDown(self):
        shutil.rmtree(self.work)

    def make(self, out, *extra):
        run = generate(out, self.page, *extra)
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(self.page, encoding="utf-8") as f:
            return f.read()

    def test_header_names_machine_date_commit_and_how_to_regenerate(self):
        page = self.make(FIXTURE)
        self.assertTrue(page.startswith("# Benchmark results\n"))
        self.assertIn("- Machine: NVIDIA H100 80GB HBM3 (driver 580.159.04); host vm, x86_64, "
                      "16 CPUs", page)
        self.assertIn("- Date: 2026-11-26T04:21:07Z", page)
        self.assertIn("- Code: `abc1234`", page)
        self.assertIn("python3 bench/make_results.py OUT --commit SHA", page)

    def test_side_by_side_table_comes_from_the_json(self):
        page = self.make(FIXTURE)
        self.assertIn("| operation | raw | cudacore | cuda.core | CuPy | cudacore / raw | "
                      "cudacore / cuda.core | note |", page)
        # 5.73 / 5.71 ms, and 6.64 / 5.72 µs flagged as over 5% slower than raw.
        self.assertIn("| compile small kernel to cubin | 5.71 ms | 5.73 ms | 9.10 ms | 24.43 ms "
                      "| 1.004 | 0.630 |  |", page)
        self.assertIn("| first get_kernel (load), cubin bytes from elsewhere | 5.72 µs | 6.64 µs | 10.54 µs | 16.57 µs | "
                      "1.161 | 0.630 | (!) |", page)
        self.assertIn("| memory cache hit, `<cuda/std>` |  | 291 ns |", page)
        self.assertIn("- CuPy, serialize_roundtrip: CuPy has no code object to serialize", page)
        self.assertIn("Host: vm, x86_64, 16 CPUs, Python 3.12.3", page)
        # The side-by-side table gpu-check.sh copied into summary.txt is no program's table.
        self.assertNotIn("### `side_by_side", page)

    def test_each_google_benchmark_program_has_its_ratio_table(self):
        page = self.make(FIXTURE)
        self.assertIn("### `event_stream_bench`\n\n| operation | raw | cudacore | cudacore / raw |"
                      "\n|---|---:|---:|---:|\n| event_create | 108.0 | 49.0 | 0.4537 |\n"
                      "| event_create_destroy | 147.0 | 82.0 | 0.5578 |\n"
                      "| event_elapsed_time | 58.0 | 61.0 | 1.052 |\n", page)
        self.assertIn("| texture_create_destroy | 2090.0 | 2240.0 | 1.072 |", page)

    def test_table_programs_tables_come_from_their_logs(self):
        page = self.make(FIXTURE)
        self.assertIn("### `thread_memory_bench`", page)
        self.assertIn("| 16 | 44.36 | 48.67 µs (1.05) |", page)
        self.assertIn("### `disk_cache_scale_bench`\n\ndisk\n\n| entries | put median |", page)
        self.assertIn("memory\n\n| entries | put median |", page)
        self.assertIn("| 10000 | 0.28 us | 1.10 us |", page)
        # Programs that printed no table are named with their exit code and last line.
        self.assertIn("- `remote_cache_bench` (rc=1): remote_cache_bench: no redis-server on PATH "
                      "and no --url given", page)
        self.assertIn("- `multigpu_bench` (rc=0): cudacore/peer_copy_256mib ERROR OCCURRED: "
                      "'needs two devices'", page)

    def test_logs_are_read_from_the_archive_gpu_check_writes(self):
        out = os.path.join(self.work, "out")
        shutil.copytree(FIXTURE, out)
        with tarfile.open(os.path.join(out, "logs.tar.gz"), "w:gz") as tar:
            for name in os.listdir(os.path.join(out, "logs")):
                tar.add(os.path.join(out, "logs", name), arcname="./" + name)
        shutil.rmtree(os.path.join(out, "logs"))
        self.assertEqual(self.make(out), self.make(FIXTURE))

    def test_hand_kept_section_is_included_as_it_is_or_left_out(self):
        by_hand = os.path.join(self.work, "by_hand.md")
        with open(by_hand, "w", encoding="utf-8") as f:
            f.write("### Two GPUs\n\n| operation | ratio |\n|---|---|\n| peer copy | 1.000 |\n")
        page = self.make(FIXTURE, "--by-hand", by_hand)
        self.assertIn("## Runs this page does not regenerate (by hand)", page)
        self.assertTrue(page.endswith("### Two GPUs\n\n| operation | ratio |\n|---|---|\n"
                                      "| peer copy | 1.000 |\n"))
        page = self.make(FIXTURE, "--by-hand", "")
        self.assertNotIn("by hand", page)
        # The repository's own hand-kept file is the default.
        self.assertIn("### MPI ranks on one host", self.make(FIXTURE))

    def test_chart_is_copied_beside_the_page_and_linked(self):
        out = os.path.join(self.work, "out")
        shutil.copytree(FIXTURE, out)
        with open(os.path.join(out, "side-by-side", "side_by_side.png"), "wb") as f:
            f.write(b"\x89PNG chart")
        page = self.make(out)
        self.assertIn("![cudacore's ratios to raw and to cuda.core](side_by_side.png)", page)
        with open(os.path.join(self.work, "side_by_side.png"), "rb") as f:
            self.assertEqual(f.read(), b"\x89PNG chart")
        self.assertNotIn("No chart in this run.", page)

    def test_a_folder_without_a_summary_is_refused(self):
        run = generate(self.work, self.page)
        self.assertEqual(run.returncode, 1)
        self.assertIn("has no summary.txt", run.stderr)
        self.assertFalse(os.path.exists(self.page))


if __name__ == "__main__":
    unittest.main(verbosity=2)
