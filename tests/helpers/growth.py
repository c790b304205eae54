"""Linear-growth checks shared by the tests, and worst cases generated from a module's patterns.

Main rule: a growth check compares the time a function takes on an input of size 4n with the
time on size n, both measured in the same run, and never compares a time with a fixed number of
seconds (the machine is shared and its speed unknown). Times are this thread's CPU time, so
waiting for a core on a loaded machine does not count. Linear work gives about 4x; quadratic
backtracking gives about 16x; the bound is 6x (the contract in DESIGN.md, "Hostile input is
bounded by construction"), measured again over a wider span before a case fails (``growth``).

`assert_linear(make, n)` checks one call built for each size; `growth(run, make)` finds a size
worth timing by itself and returns the ratio.

`worst_cases(patterns)` reads the compiled patterns of a module (their literal characters, the
literal runs such as `<!--` or `:::`, their bracket pairs) and builds, for each, the inputs that
make backtracking patterns slow: runs of one character, of a character and a space, of an opener,
an opener repeated with text between, nested openers and closers, and a long run between two
words (`a<spaces>a`, which is what a lazy group before a greedy tail needs).
"""

from __future__ import annotations

import gc
import math
import re
import re._constants as sre_constants
import re._parser as sre_parser
import time
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

MAX_RATIO = 6.0
# The size n starts here and doubles until the function takes this long at n, so the ratio is
# not a ratio of timer noise; a function still faster than that at MAX_N is bounded anyway: a
# quadratic one under the floor at 4 * MAX_N (65,536 characters) would take under a quarter of
# a second on the largest document split (1 MiB). Half the cases of a context stop at MAX_N;
# at 1 << 15 they cost 30% more of the markdown and reST checks, for inputs no file reaches.
START_N = 256
FLOOR_SECONDS = 0.001
MAX_N = 1 << 14

Make = Callable[[int], str]

_PAIRS = {"[": "]", "(": ")", "{": "}", "<": ">", "`": "`", "*": "*", '"': '"', "'": "'"}
_ALWAYS = (" ", "\t", "a", "0", "-", "\n")


def _seconds(run: Callable[[str], object], text: str, repeats: int, calls: int = 1) -> float:
    """The best of ``repeats`` timings of ``calls`` calls, per call."""
    best = float("inf")
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            started = time.thread_time()
            for _ in range(calls):
                run(text)
            best = min(best, (time.thread_time() - started) / calls)
    finally:
        if enabled:
            gc.enable()
    return best


def _start(run: Callable[[str], object], make: Make) -> tuple[int, float | None]:
    """(n, time at n or None when not timed) where the doubling search may start.

    One timing at START_N says where a linear function passes the floor; the search starts
    there instead of timing every size below (those timings cost a fifth of a case's work). A
    super-linear function passes the floor sooner, so its n is at least the first size over the
    floor, where its ratio is no smaller; a function with a fixed cost reads slower than it
    grows and doubles on from there, as before. A function a linear reading puts under the floor
    at MAX_N is not timed at MAX_N yet: under the floor at 4 * MAX_N it is bounded whatever
    MAX_N took (at most that), which saves a third of such a case's work."""
    at_start = _seconds(run, make(START_N), 1)
    if at_start >= FLOOR_SECONDS:
        return START_N, at_start
    steps = math.ceil(math.log2(FLOOR_SECONDS / max(at_start, 1e-9)))
    n = min(MAX_N, START_N << max(1, steps))
    return n, None


def _interleaved(
    run: Callable[[str], object], small: str, big: str, calls: int, rounds: int = 5
) -> float:
    """Time at ``big`` / time at ``small``, the best of ``rounds`` timings each, taken in turn
    so that a slow spell of the machine slows both sizes."""
    times = {len(small): float("inf"), len(big): float("inf")}
    for _ in range(rounds):
        for text in (small, big):
            times[len(text)] = min(times[len(text)], _seconds(run, text, 1, calls))
    return times[len(big)] / max(times[len(small)], 1e-9)


def growth(run: Callable[[str], object], make: Make) -> tuple[int, float]:
    """(n, time at 4n / time at n) for `run` on `make(n)` and `make(4 * n)`.

    One timing of each first; a ratio over the bound is measured again (twice at most) as the
    best of five interleaved timings, so a scheduler pause on a loaded machine does not read as
    quadratic work, and the second time at 2n and 8n: linear code can step once between two
    sizes (a buffer outgrowing a cache: rst titles read 5x to 6.4x from 2,048 to 8,192
    characters and 3.9x from 4,096 to 16,384), quadratic work is 16x at every size. Still over
    the bound, the ratio is the one per 4x over n to 16n (a step is spread over two 4x's, growth
    is not: tests/test_linear_growth.py checks that n^2 stays over it)."""
    n, at_n = _start(run, make)
    if at_n is None and n == MAX_N:
        big = make(4 * n)
        at_4n = _seconds(run, big, 1)
        if at_4n < FLOOR_SECONDS:  # 4 * MAX_N characters in under the floor: cut before any work
            return n, 1.0
        at_n = _seconds(run, make(n), 1)
    else:
        while at_n is None or (at_n < FLOOR_SECONDS and n < MAX_N):
            if at_n is not None:
                n *= 2
            at_n = _seconds(run, make(n), 1)
        big = make(4 * n)
        at_4n = _seconds(run, big, 1)
        if at_4n < FLOOR_SECONDS:
            return n, 1.0
    small = make(n)
    ratio = at_4n / max(at_n, 1e-9)
    # A function still under the floor at MAX_N is timed over enough calls to pass it: a ratio
    # of two timer readings of a few microseconds is noise (6.1x once, under load).
    calls = max(1, math.ceil(FLOOR_SECONDS / max(at_n, 1e-6)))
    for shift in range(2):  # quadratic work is over the bound every time; a pause is not
        if ratio <= MAX_RATIO:
            return n, ratio
        if shift:
            small, big = make(2 * n), make(8 * n)
        ratio = _interleaved(run, small, big, calls)
    if ratio <= MAX_RATIO:
        return n, ratio
    # Still over: one step, or growth? Under a loaded parallel run, linear code read 6.8x to 7.9x
    # from 16,384 to 65,536 characters, every time (a string and its pieces outgrowing a cache
    # shared with the other workers), where alone it reads 4x. Over 16 times the size, linear
    # work with one such step reads under 30x; quadratic work reads 256x, and n^1.5 64x: the
    # ratio per 4x over that span (its square root) is what is bounded.
    return n, math.sqrt(_interleaved(run, make(n), make(16 * n), calls, rounds=3))


ROUNDS = 5  # the best of a few runs each, taken in turn, so one preempted run cannot decide


def _timed(run: Callable[[], object]) -> float:
    started = time.thread_time()
    run()
    return time.thread_time() - started


def assert_linear(make: Callable[[int], Callable[[], object]], n: int) -> None:
    """``make(size)`` returns a call over an input of that size; it must grow linearly (time at
    4n at most MAX_RATIO times time at n, the best of up to ROUNDS runs each, taken in turn).

    The small call runs once untimed first (a first call pays for imports and compiled
    patterns, which would read as a slow n and a small ratio). Rounds stop at the second whose
    ratio is under the bound: quadratic work is 16x in every round, so two rounds under 6x are
    linear, and only a ratio over the bound needs the best of all ROUNDS to tell a preempted
    run from growth (two of five rounds cost 11 calls' worth of n instead of 25).

    A ratio over the bound is measured again, twice at most, as growth() does, the last time at
    2n and 8n: quadratic work is over the bound every time (16x at 4n), while a parallel run's
    neighbour sharing the caches pushed linear code to 6.4x once in a full run, and a step
    between two sizes is at one size only."""
    small_run, large_run = make(n), make(4 * n)
    small_run()
    ratio = 0.0
    for attempt in range(3):
        if attempt == 2:
            small_run, large_run = make(2 * n), make(8 * n)
            small_run()
        small = large = float("inf")
        enabled = gc.isenabled()
        gc.disable()  # as timeit does: a collection falling in one run is not the code's growth
        try:
            for done in range(1, ROUNDS + 1):
                small = min(small, _timed(small_run))
                large = min(large, _timed(large_run))
                ratio = large / max(small, 1e-4)
                if done >= 2 and ratio <= MAX_RATIO:
                    return
        finally:
            if enabled:
                gc.enable()
    raise AssertionError(f"time at 4n is {ratio:.1f}x time at n")


def slow_cases(
    run: Callable[[str], object], cases: dict[str, Make]
) -> dict[str, tuple[int, float]]:
    """The cases whose growth is over the bound, with their n and ratio: {} when all are linear."""
    found = {}
    for name, make in cases.items():
        n, ratio = growth(run, make)
        if ratio > MAX_RATIO:
            found[name] = (n, round(ratio, 1))
    return found


def module_patterns(*modules: ModuleType) -> list[re.Pattern[str]]:
    """Every compiled pattern a module holds at its top level (and in top-level tuples of
    (pattern, replacement) pairs)."""
    found: list[re.Pattern[str]] = []
    for module in modules:
        for value in vars(module).values():
            for item in value if isinstance(value, tuple | list) else (value,):
                for inner in item if isinstance(item, tuple) else (item,):
                    if hasattr(inner, "pattern") and isinstance(inner.pattern, str):
                        found.append(inner)
    return found


def _walk(tree: Any, runs: list[str], chars: set[str]) -> None:
    run = ""
    for op, av in tree:
        if op is sre_constants.LITERAL:
            run += chr(av)
            chars.add(chr(av))
            continue
        if run:
            runs.append(run)
            run = ""
        if op is sre_constants.IN:
            for member_op, member in av:
                if member_op is sre_constants.LITERAL:
                    chars.add(chr(member))
                elif member_op is sre_constants.RANGE:
                    chars.update((chr(member[0]), chr(member[1])))
        elif op is sre_constants.SUBPATTERN:
            _walk(av[-1], runs, chars)
        elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
            _walk(av[2], runs, chars)
        elif op is sre_constants.POSSESSIVE_REPEAT:
            _walk(av[2], runs, chars)
        elif op is sre_constants.BRANCH:
            for branch in av[1]:
                _walk(branch, runs, chars)
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            _walk(av[1], runs, chars)
    if run:
        runs.append(run)


def pattern_pieces(patterns: Iterable[re.Pattern[str]]) -> tuple[set[str], set[str]]:
    """(single characters, literal runs of two or more) that the patterns match literally."""
    runs: list[str] = []
    chars: set[str] = set()
    for pattern in patterns:
        source = pattern.pattern
        try:
            tree = sre_parser.parse(source, pattern.flags & ~re.UNICODE)
        except (re.error, TypeError, ValueError):  # `regex` syntax (\p{...}): its plain characters
            chars.update(c for c in source if not c.isalnum() and c not in "\\()[]{}|?*+^$.")
            continue
        _walk(tree, runs, chars)
    printable = {c for c in chars if c.isprintable() or c in "\t\n"}
    return printable, {r for r in runs if len(r) >= 2 and r.strip()}


def worst_cases(patterns: Iterable[re.Pattern[str]]) -> dict[str, Make]:
    """Inputs of size about n, by name, that would show super-linear work in these patterns."""
    chars, runs = pattern_pieces(patterns)
    cases: dict[str, Make] = {}

    def add(name: str, unit: str, before: str = "", after: str = "") -> None:
        def make(n: int, unit: str = unit, before: str = before, after: str = after) -> str:
            return before + unit * max(1, n // len(unit)) + after

        cases.setdefault(name, make)

    # Letters and digits a pattern names literally are covered by its literal runs (`title`).
    for c in sorted({c for c in chars if not c.isalnum()} | set(_ALWAYS)):
        add(f"run of {c!r}", c)
        add(f"{c!r} between words", c, "a", "a")
        add(f"{c!r} and space", c + " ")
        add(f"{c!r} a letter and space", c + "a ")
        if c in _PAIRS:
            opener, closer = c, _PAIRS[c]

            def nested(n: int, opener: str = opener, closer: str = closer) -> str:
                return opener * (n // 2) + "a" + closer * (n // 2)

            cases[f"nested {opener}{closer}"] = nested
            add(f"{opener} opened with a space inside", opener + "a ", "", "")
    for r in sorted(runs):
        add(f"run of opener {r!r}", r)
        add(f"opener {r!r} and a word", r + "a b ")
    unique: dict[str, Make] = {}
    seen: set[str] = set()
    for name, make in cases.items():
        if make(64) not in seen:
            seen.add(make(64))
            unique[name] = make
    return unique


def in_context(cases: dict[str, Make], contexts: dict[str, str]) -> dict[str, Make]:
    """Each case placed in each context (a template whose `{}` is where the case goes)."""
    placed: dict[str, Make] = {}
    for where, template in contexts.items():
        head, _, tail = template.partition("{}")
        for name, make in cases.items():

            def made(n: int, make: Make = make, head: str = head, tail: str = tail) -> str:
                return head + make(n) + tail

            placed[f"{name} in {where}"] = made
    return placed
