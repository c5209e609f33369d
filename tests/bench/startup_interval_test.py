#!/usr/bin/env python3
"""bench/startup.py's interval of a ratio of medians: it holds the ratio of the rounds' medians,
it narrows as rounds are added, it follows a real difference between two programs, it is the same
on every call (a fixed seed), and it is refused for too few rounds."""

import importlib.util
import os
import random
import statistics
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(os.path.dirname(HERE)), "bench", "startup.py")
spec = importlib.util.spec_from_file_location("startup", SCRIPT)
startup = importlib.util.module_from_spec(spec)
spec.loader.exec_module(startup)


def rounds(count, slower_by, seed):
    """`count` rounds of a base program (350 ms, spread 25 ms) and one `slower_by` ms slower,
    each round's two runs sharing the host's drift."""
    pick = random.Random(seed)
    base, other = [], []
    for _ in range(count):
        drift = pick.gauss(0, 20)
        base.append(350 + drift + pick.gauss(0, 15))
        other.append(350 + slower_by + drift + pick.gauss(0, 15))
    return other, base


class RatioInterval(unittest.TestCase):
    def test_the_interval_holds_the_ratio_of_medians(self):
        other, base = rounds(60, 5, seed=1)
        low, high = startup.ratio_interval(other, base)
        self.assertLess(low, high)
        self.assertLessEqual(low, statistics.median(other) / statistics.median(base))
        self.assertGreaterEqual(high, statistics.median(other) / statistics.median(base))

    def test_more_rounds_narrow_it(self):
        few = startup.ratio_interval(*rounds(20, 5, seed=2))
        many = startup.ratio_interval(*rounds(400, 5, seed=2))
        self.assertLess(many[1] - many[0], (few[1] - few[0]) * 0.6)

    def test_it_follows_a_real_difference(self):
        low, high = startup.ratio_interval(*rounds(300, 35, seed=3))  # 10% slower
        self.assertGreater(low, 1.05)
        self.assertLess(high, 1.15)
        low, high = startup.ratio_interval(*rounds(300, 0, seed=3))  # the same
        self.assertLess(low, 1.0)
        self.assertGreater(high, 1.0)

    def test_the_same_rounds_give_the_same_interval(self):
        other, base = rounds(50, 5, seed=4)
        self.assertEqual(startup.ratio_interval(other, base), startup.ratio_interval(other, base))

    def test_too_few_rounds_give_none(self):
        self.assertIsNone(startup.ratio_interval([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0]))


if __name__ == "__main__":
    unittest.main()
