"""Who may call ``scout serve``, decided without a server: the rules of scout/serve/security.py,
the limits (scout/serve/limits.py), the log throttle and the rate identities of the service.

Tables of requests as a client, a proxy, a browser page or another site's page would send them,
and each rule's worst-case input in linear time. The same rules against the real server on
loopback are in tests/test_serve_attacks.py.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from scout.config import ServeConfig
from scout.errors import Refused
from scout.serve.limits import ClientSlots
from scout.serve.security import Security
from scout.serve.service import Service
from scout.serve.throttle import MAX_KINDS, Throttle
from tests.fakes.serving import write_serve_config
from tests.helpers.growth import assert_linear


def security(tmp_path: Path, host: str = "127.0.0.1", **serve: object) -> Security:
    from scout.config import load_config

    return Security.of(load_config(write_serve_config(tmp_path, **serve)), host)


@pytest.mark.parametrize(
    ("peer", "forwarded", "client"),
    [
        ("203.0.113.7", None, "203.0.113.7"),
        # a client that is no trusted proxy says what it likes: its own address counts
        ("203.0.113.7", "198.51.100.1", "203.0.113.7"),
        ("127.0.0.1", "198.51.100.1", "198.51.100.1"),
        # right to left, past the trusted proxies: a client's own X-Forwarded-For is ignored
        ("127.0.0.1", "6.6.6.6, 198.51.100.1, 10.0.0.2", "198.51.100.1"),
        ("127.0.0.1", "10.0.0.2, 10.0.0.3", "10.0.0.2"),
        ("127.0.0.1", "not-an-address", "127.0.0.1"),
        ("127.0.0.1", "", "127.0.0.1"),
        ("127.0.0.1", "1.2.3.4" + ", x" * 10_000, "127.0.0.1"),
        # one IPv6 client holds a /64: its addresses are one client
        ("2001:db8:1:2::1", None, "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff::9", None, "2001:db8:1:2::/64"),
        ("::ffff:203.0.113.7", None, "203.0.113.7"),
        (None, None, "unknown"),
    ],
)
def test_the_client_is_its_address_and_only_trusted_proxies_forward_one(
    tmp_path: Path, peer: str | None, forwarded: str | None, client: str
) -> None:
    rules = security(tmp_path, trusted_proxies=["127.0.0.1", "10.0.0.0/8"])
    assert rules.client_address(peer, forwarded) == client


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("127.0.0.1:8765", True),
        ("127.0.0.1", True),
        ("localhost:8765", True),
        ("LOCALHOST", True),
        ("[::1]:8765", True),
        ("scout.test", True),
        ("SCOUT.test:443", True),
        ("scout.test.", True),
        (None, False),
        ("", False),
        ("evil.test", False),
        ("scout.test.evil.test", False),
        ("scout.test:x", False),
        ("scout.test:", False),
        ("127.0.0.1@evil.test", False),
        ("[::1", False),
        ("[::1]x", False),
        ("scout.test " * 50, False),
        ("a" * 100_000, False),
    ],
)
def test_a_request_must_name_this_server(tmp_path: Path, host: str | None, allowed: bool) -> None:
    rules = security(tmp_path, allowed_hosts=["Scout.Test"])
    assert rules.host_allowed(host) is allowed


PAGE = "127.0.0.1:8765"


@pytest.mark.parametrize(
    ("headers", "allowed"),
    [
        ({}, True),  # a script, a bot, curl: no browser, no origin to judge
        ({"sec-fetch-site": "none"}, True),
        ({"sec-fetch-site": "same-origin"}, True),
        ({"sec-fetch-site": "cross-site"}, False),
        ({"origin": f"http://{PAGE}"}, True),  # the page's own form
        ({"origin": "http://127.0.0.1:9999"}, False),  # another service on this machine
        ({"origin": "https://scout.test"}, True),  # an allowed host's page behind the proxy
        ({"origin": "https://chat.test"}, True),  # a listed CORS origin
        ({"origin": "https://chat.test/"}, True),
        ({"origin": "https://evil.test"}, False),
        ({"origin": "https://scout.test.evil.test"}, False),
        ({"origin": "null"}, False),  # a sandboxed frame, a file
        ({"origin": "null", "sec-fetch-site": "same-origin"}, True),  # a no-referrer page
        ({"origin": "null", "sec-fetch-site": "cross-site"}, False),
        ({"origin": "javascript:alert(1)"}, False),
        ({"origin": "http://127.0.0.1:99999"}, False),
        ({"origin": "http://[::1"}, False),
        ({"origin": "https://" + "a" * 100_000}, False),
    ],
)
def test_a_post_must_come_from_the_page_a_listed_origin_or_no_browser(
    tmp_path: Path, headers: dict[str, str], allowed: bool
) -> None:
    rules = security(tmp_path, allowed_hosts=["scout.test"], cors_origins=["https://chat.test"])
    assert rules.origin_allowed({"host": PAGE, **headers}) is allowed


@pytest.mark.parametrize(
    ("host", "serve", "env", "refused", "unsafe"),
    [
        ("127.0.0.1", {}, {}, None, []),
        ("0.0.0.0", {}, {}, "serving on 0.0.0.0 with no API keys", ["no API keys"]),
        ("0.0.0.0", {"open": True}, {}, None, []),
        ("127.0.0.1", {"api_keys_env": "K"}, {}, "names K, which holds no key", ["holds no key"]),
        ("127.0.0.1", {"api_keys_env": "K"}, {"K": " , ,"}, "holds no key", ["holds no key"]),
        ("127.0.0.1", {"api_keys_env": "K", "open": True}, {"K": ""}, None, []),
        ("10.1.2.3", {"api_keys_env": "K"}, {"K": "short"}, None, ["shorter than 16"]),
        ("127.0.0.1", {"api_keys_env": "K"}, {"K": "short"}, None, []),
        ("10.1.2.3", {"api_keys_env": "K"}, {"K": "k" * 24}, None, []),
        ("127.0.0.1", {"trusted_proxies": ["0.0.0.0/0"]}, {}, None, ["trusts every address"]),
        ("127.0.0.2", {}, {}, None, []),  # all of 127.0.0.0/8 is loopback
        ("localhost", {}, {}, None, []),
    ],
)
def test_keys_never_fail_open_and_the_check_names_what_is_unsafe(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    host: str,
    serve: dict[str, object],
    env: dict[str, str],
    refused: str | None,
    unsafe: list[str],
) -> None:
    monkeypatch.delenv("K", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    rules = security(tmp_path, host, **serve)
    reason = rules.refusal()
    assert (reason is None) == (refused is None) and (refused or "") in (reason or "")
    found = [text for level, text in rules.findings() if level == "unsafe"]
    assert len(found) == len(unsafe) and all(u in f for u, f in zip(unsafe, found, strict=True))
    assert "short" not in repr(rules.summary()) and "kkkk" not in repr(rules.summary())


@pytest.mark.parametrize(
    "make",
    [
        lambda n: ("client", "127.0.0.1", "1.2.3.4, " * n),
        lambda n: ("client", "127.0.0.1", "[" * n),
        lambda n: ("host", "a." * n + "test"),
        lambda n: ("host", "[" * n),
        lambda n: ("origin", "https://" + "a." * n + "test:1"),
        lambda n: ("origin", "https://[" + ":" * n + "]"),
    ],
)
def test_every_rule_reads_its_header_in_linear_time(tmp_path: Path, make: object) -> None:
    rules = security(tmp_path, trusted_proxies=["127.0.0.1"])

    def call(n: int) -> object:
        kind, *args = make(n)  # type: ignore[operator]
        if kind == "client":
            return lambda: rules.client_address(args[0], args[1])
        if kind == "host":
            return lambda: rules.host_allowed(args[0])
        return lambda: rules.origin_allowed({"origin": args[0], "host": PAGE})

    assert_linear(call, 1_000)  # type: ignore[arg-type]


# -- the limits and identities


def test_one_client_holds_at_most_its_slots_and_leaves_nothing_behind() -> None:
    async def main() -> tuple[int, str, int]:
        slots = ClientSlots(2, 0.05)
        await slots.acquire("a")
        await slots.acquire("a")
        await slots.acquire("b")  # another client is not held back
        try:
            await slots.acquire("a")
            code = "none"
        except Refused as refused:
            code = f"{refused.status} {refused.code} {refused.retry_after}"
        held = slots.clients()
        for client in ("a", "a", "b"):
            slots.release(client)
        return held, code, slots.clients()

    assert asyncio.run(main()) == (2, "429 too_many_answers 1", 0)


def test_keyless_clients_are_addresses_and_unknown_keys_spend_the_address_s_rate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scout.config import load_config

    monkeypatch.setenv("SCOUT_TEST_KEYS", "good-key-0123456789")
    keyed = load_config(
        write_serve_config(tmp_path, api_keys_env="SCOUT_TEST_KEYS", rate_limit="3/hour")
    )
    service = Service(keyed)
    codes = []
    for n in range(5):
        try:
            service.client(f"guess-{n}", "203.0.113.9")
        except Refused as refused:
            codes.append(refused.status)
    assert codes == [401, 401, 401, 429, 429]
    # the address is spent, not the key: the good key still has its own allowance
    client = service.client("good-key-0123456789", "203.0.113.9")
    service.admit(client)
    # addresses sprayed from everywhere never push a keyed client out of its table
    for n in range(service.rate.max_clients + 100):
        service.admit(f"addr:10.{n // 65536}.{n // 256 % 256}.{n % 256}")
    assert service.key_rate.clients() == 1

    keyless = Service(load_config(write_serve_config(tmp_path, rate_limit="3/hour")))
    clients = {keyless.client(f"made-up-{n}", "203.0.113.9") for n in range(5)}
    assert clients == {"addr:203.0.113.9"}


def test_the_log_lets_through_a_few_lines_of_a_kind_and_says_how_many_it_held() -> None:
    now = [0.0]
    throttle = Throttle(burst=10, window=60.0, clock=lambda: now[0])

    def record(message: str) -> logging.LogRecord:
        return logging.LogRecord("uvicorn.error", logging.WARNING, "", 0, message, None, None)

    passed = [throttle.filter(record("Invalid HTTP request received.")) for _ in range(1_000)]
    assert passed.count(True) == 10
    now[0] = 61.0
    later = record("Invalid HTTP request received.")
    assert throttle.filter(later) and later.msg.startswith("(990 similar line(s) held back)")
    # kinds made from a client's text share one allowance past MAX_KINDS
    kinds = [throttle.filter(record(f"Invalid Host header: {n}")) for n in range(MAX_KINDS * 4)]
    assert kinds.count(True) <= MAX_KINDS + 10


def test_serve_config_defaults_are_the_safe_ones() -> None:
    serve = ServeConfig()
    assert (serve.open, serve.trusted_proxies, serve.allowed_hosts) == (False, [], [])
    assert (serve.header_timeout, serve.max_concurrent_answers_per_client) == (10.0, 1)
