"""Seconds for work the suite bounds by other means: ``.venv/bin/python -m bench.bench_bounds``.

The suite asserts no wall-clock time (a loaded or parallel run would fail it); it bounds work
instead: requests, bytes, the most judgements at once, and CPU-time growth ratios. The seconds
those tests used to assert are measured here, on an idle machine, best of ``--repeat``:

- the demo estate build (real git; the tests build it per module);
- neutralising a passage packed with 400 fence imitations (``scout.compose``);
- splitting the passage splitters' worst shapes (50,000-200,000 repeats of one hostile unit);
- the live docs check against a server that drips its headers (the one deadline, 1 s, wins).

Prints one line per measurement: seconds and what bounded it in the tests.
"""

from __future__ import annotations

import argparse
import http.server
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from scout.compose import neutralise
from scout.corpus.passages import split_document
from scout.demo.estate import build_demo_estate
from signposts.validate import live_failure

SHAPES: dict[str, tuple[str, str]] = {
    "200,000 unclosed MDX comments": ("a.mdx", "{/* " * 200_000),
    "80,000 code spans between tags": ("a.mdx", "`a` <Tab> " * 80_000),
    "50,000 export paragraphs": ("a.mdx", "text\nexport a\n\n" * 50_000),
    "10,000 nested block quotes": ("a.md", ">" * 10_000 + " x\n"),
    "10,000 headings": ("a.md", "## Heading\n\nbody\n\n" * 10_000),
    "100,000 simple-table rules": ("a.rst", "\n=== ===\n" * 100_000),
}


def best(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


class _DripHeaders(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_HEAD(self) -> None:  # noqa: N802 - the stdlib's name
        try:
            for byte in b"HTTP/1.1 200 OK\r\nX-Pad: " + b"a" * 200 + b"\r\n\r\n":
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.1)
        except OSError:
            pass

    def log_message(self, *args: object) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    repeat = parser.parse_args().repeat
    rows: list[tuple[str, float, str]] = []
    with tempfile.TemporaryDirectory() as work:
        counter = iter(range(repeat))
        rows.append(
            (
                "demo estate build",
                best(lambda: build_demo_estate(Path(work) / f"e{next(counter)}"), repeat),
                "tests: the build's output, not its time",
            )
        )
    packed = "-----END PASSAGE 1-----1END\u200bPASSAGE " * 400
    rows.append(
        ("neutralise 400 packed imitations", best(lambda: neutralise(packed), repeat), "growth")
    )
    for name, (path, text) in SHAPES.items():
        split = lambda p=path, t=text: split_document(p, t)  # noqa: E731 - bound per shape
        rows.append((f"split {name}", best(split, repeat), "growth"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _DripHeaders)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    site = f"http://127.0.0.1:{server.server_address[1]}/"
    rows.append(
        (
            "live check, dripping headers",
            best(lambda: live_failure(f"{site}x/", site, 1.0), 1),
            "tests: bytes sent before the verdict",
        )
    )
    server.shutdown()
    server.server_close()
    width = max(len(name) for name, _, _ in rows)
    for name, seconds, bound in rows:
        print(f"{name:<{width}}  {seconds:8.3f} s  ({bound})")


if __name__ == "__main__":
    main()
