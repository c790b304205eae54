"""The live docs check asks for a status only, under one deadline, once per URL per run.

A loopback docs server that drips: one page sends its headers at once and then a body a byte at a
time (HEAD refused, so the check must GET and close unread), another drips its headers (the
check must give up at the deadline whatever the per-read timeout would say), and a third answers
HEAD (no GET at all).
"""

from __future__ import annotations

import http.server
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scout.config import load_config
from scout.corpus.rules import CorpusRules
from scout.demo.builder import EstateBuilder
from scout.forge.local import LocalForge
from scout.providers import make_provider
from signposts.extract import extract
from signposts.validate import Validator, live_failure
from tests.helpers.config import render_config

DRIP = 0.1  # seconds between bytes
DEADLINE = 1.0
QUESTION = "How do I rotate the signing keys?"


class _Dripping(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: Counter[tuple[str, str]] = Counter()
    sent: Counter[str] = Counter()  # bytes dripped, by path
    hung_up: set[str] = set()  # paths whose client closed before the drip ended

    def do_HEAD(self) -> None:  # noqa: N802 - the stdlib's name
        self.seen[("HEAD", self.path)] += 1
        if self.path.startswith("/handbook/keys/"):
            self._headers(200, 0)
        elif self.path.startswith("/handbook/headers/"):
            self._drip(b"HTTP/1.1 200 OK\r\nX-Pad: " + b"a" * 200 + b"\r\n\r\n")
        else:
            self._headers(501, 0)

    def do_GET(self) -> None:  # noqa: N802
        self.seen[("GET", self.path)] += 1
        if self.path.startswith("/handbook/body/"):
            self._headers(200, 200)
            self._drip(b"b" * 200)
        elif self.path.startswith("/handbook/headers/"):
            self._drip(b"HTTP/1.1 200 OK\r\nX-Pad: " + b"a" * 200 + b"\r\n\r\n")
        else:
            self._headers(404, 0)

    def _headers(self, status: int, length: int) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(length))
        self.end_headers()

    def _drip(self, data: bytes) -> None:
        try:
            for i in range(len(data)):
                self.wfile.write(data[i : i + 1])
                self.wfile.flush()
                self.sent[self.path] += 1
                time.sleep(DRIP)
        except OSError:
            self.hung_up.add(self.path)  # the check hung up, as it should

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    _Dripping.seen, _Dripping.sent, _Dripping.hung_up = Counter(), Counter(), set()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Dripping)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/handbook/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def checker(
    tmp_path: Path, estate_builder: EstateBuilder, site: str
) -> Iterator[tuple[Validator, Any]]:
    page = "# Rotating keys\n\nRotate the signing keys with the vault CLI.\n"
    estate_builder.project("acme/handbook").commit(
        {f"docs/{name}.md": page for name in ("body", "headers", "keys")}, "init"
    )
    estate_builder.write()
    config_path = tmp_path / "scout.toml"
    docs = {"url": site, "project": "acme/handbook", "root": "docs/", "check_live": True}
    config_path.write_text(render_config(estate_builder.root, docs_site=[docs]))
    config = load_config(config_path)
    forge = LocalForge(estate_builder.root, ["acme"])
    rules = CorpusRules(("acme",), config.corpus)
    provider = make_provider("offline", model="")
    try:
        yield Validator(forge, rules, provider, config.docs_site, live_deadline=DEADLINE), config
    finally:
        forge.close()


def timed(validator: Validator, config: Any, url: str) -> tuple[float, str, str]:
    from signposts.references import extract_context

    (reference,) = extract(url, extract_context(config, "acme/handbook")).references
    started = time.monotonic()
    verdict = validator.validate(reference, QUESTION)
    return time.monotonic() - started, verdict.status, verdict.reason


def hung_up_after(path: str, length: int) -> int:
    """The bytes of ``path``'s drip sent before the check closed the connection. The server
    notices at its next write, a drip or two later; the wait ends long before the drip would."""
    deadline = time.monotonic() + length * DRIP
    while path not in _Dripping.hung_up and time.monotonic() < deadline:
        time.sleep(DRIP / 2)
    assert path in _Dripping.hung_up, f"the check read {path} to its end"
    return _Dripping.sent[path]


def test_a_dripping_body_is_never_read(checker: tuple[Validator, Any], site: str) -> None:
    check, config = checker
    _, status, reason = timed(check, config, f"{site}body/")
    assert status == "accepted", reason
    # the status came with the headers: the 200-byte body (20 s of drip) is left unread
    assert hung_up_after("/handbook/body/", 200) < 200
    # Asked twice in one run: answered from memory, no second request.
    assert timed(check, config, f"{site}body/#rotating-keys")[1] == "accepted"
    assert _Dripping.seen == {("HEAD", "/handbook/body/"): 1, ("GET", "/handbook/body/"): 1}


def test_dripping_headers_meet_one_overall_deadline(
    checker: tuple[Validator, Any], site: str
) -> None:
    check, config = checker
    seconds, status, reason = timed(check, config, f"{site}headers/")
    assert (status, reason) == ("rejected", f"{site}headers/ did not answer within 1 s")
    assert seconds >= DEADLINE  # a lower bound: the deadline was waited out, not cut short
    # One deadline for the whole answer: the verdict came with the headers (220 bytes, 22 s of
    # drip) far from done, though every byte came well within the per-read timeout.
    assert _Dripping.sent["/handbook/headers/"] < 220
    asked = dict(_Dripping.seen)
    assert timed(check, config, f"{site}headers/")[1:] == (status, reason)
    assert _Dripping.seen == asked  # remembered for the rest of the run: not asked again


def test_a_server_that_answers_head_gets_no_get(site: str) -> None:
    assert live_failure(f"{site}keys/", site, DEADLINE) is None
    assert live_failure(f"{site}gone/", site, DEADLINE) == f"{site}gone/ answered 404"
    assert _Dripping.seen == {("HEAD", "/handbook/keys/"): 1, ("HEAD", "/handbook/gone/"): 1,
                              ("GET", "/handbook/gone/"): 1}  # fmt: skip
