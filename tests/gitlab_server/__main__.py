"""Serve an estate in the foreground.

``python -m tests.gitlab_server ESTATE [--port N] [--token T] [--latency S] [--quiet]`` prints
the base URL on stdout, then logs requests on stderr until interrupted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tests.gitlab_server.server import GitLabServer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.gitlab_server", description=__doc__)
    parser.add_argument("estate", type=Path, help="estate directory (with estate.toml)")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any)")
    parser.add_argument("--token", default="glpat-test-token", help="the accepted PRIVATE-TOKEN")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to each request")
    parser.add_argument("--quiet", action="store_true", help="no access log on stderr")
    args = parser.parse_args(argv)
    if not (args.estate / "estate.toml").is_file():
        parser.error(f"{args.estate} has no estate.toml")
    server = GitLabServer(
        args.estate, token=args.token, latency=args.latency, port=args.port, verbose=not args.quiet
    )
    server.start()
    # the URL goes to stdout so a benchmark script can read it; the token is not printed
    print(server.url, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
