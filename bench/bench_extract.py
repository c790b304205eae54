"""Time signpost extraction on 1 MiB issues of worst-case text.

Each shape is built to exercise one pattern's worst case (long runs of ``/``, ``!``, ``#``, hex,
brackets and dots; URLs that end early over and over; Markdown link openers with no target; a
flood of distinct references). Run: ``.venv/bin/python bench/bench_extract.py [--repeat N]``.
Prints one line per shape: seconds (best of N), references kept, and what was skipped.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from signposts.extract import extract_issue
from signposts.references import DocsSite, ExtractContext

MIB = 1 << 20
G = "https://gitlab.acme.example"
CTX = ExtractContext(
    gitlab_url=G,
    docs_sites=(DocsSite("https://docs.acme.example/config/", "acme/config", "docs/"),),
    project="acme/app",
)


def _fill(unit: str) -> str:
    return (unit * (MIB // len(unit.encode("utf-8")) + 1))[:MIB]


SHAPES: dict[str, Callable[[], str]] = {
    "runs of / ! # hex [ ( . in one token": lambda: _fill(
        "/" * 4096 + "!" * 4096 + "#" * 4096 + "ab12" * 1024 + "[(" * 2048 + "." * 4096
    ),
    "one 1 MiB token of path segments": lambda: _fill("a/"),
    "bare URLs ending at an unclosed bracket": lambda: _fill(f"{G}/a/["),
    "distinct bare URLs ending at an unclosed bracket": lambda: "".join(
        f"{G}/a{i}/[" for i in range(40000)
    )[:MIB],
    "bare URLs with quotes and dots": lambda: _fill(f"{G}/a/'b'..c'"),
    "Markdown link openers with no target": lambda: _fill("]("),
    "Markdown targets with nested parentheses": lambda: _fill("](a(b)"),
    "hex words with separators": lambda: _fill("deadbeef1 "),
    "short forms glued together": lambda: _fill("a/b!1@abc1234"),
    "zero-width and bidi characters between URLs": lambda: _fill(
        f"{G}/a/-/blob/m/x.py\u200b\u202e"
    ),
    "distinct references (past the limit)": lambda: "".join(
        f"!{i} src/f{i}.py {G}/acme/c/-/blob/main/f{i}.md#L{i} " for i in range(1, 40000)
    )[:MIB],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    worst = 0.0
    for name, build in SHAPES.items():
        text = build()
        best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            result = extract_issue("", text, [], CTX)
            best = min(best, time.perf_counter() - start)
        worst = max(worst, best)
        size = len(text.encode("utf-8"))
        print(
            f"{best:7.3f} s  {size / MIB:4.2f} MiB  refs={len(result.references):3d}  "
            f"skipped={dict(result.skipped)}  {name}"
        )
    print(f"worst shape: {worst:.3f} s per 1 MiB issue (timeout budget {CTX.timeout} s per text)")


if __name__ == "__main__":
    main()
