"""The third review's attacks, each class against the real server on loopback (and, at the end,
the command-line inputs it found exiting 1: compare files, a NUL in a path, the sweep lock).

Real sockets, real slow clients and a hostile OpenAI-compatible server (tests/fakes/openai_api.py:
it hangs, dribbles and lies). What each test attacks is in its name; bounds are counted
(statuses, requests, bytes, log lines), with configured timeouts of a second or two so that a
server that ignored them shows as a wrong status, not as a slow test. The rules themselves,
without a server, are in tests/test_serve_security.py.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from scout.store import Store
from tests.fakes.corpus import make_store
from tests.fakes.openai_api import LEAK, FakeOpenAI
from tests.fakes.serving import (
    SCOUT,
    Server,
    claude_on_path,
    free_port,
    running,
    wait_until_up,
    write_serve_config,
)
from tests.helpers.run import run_cli

# One worker runs the module (its module-scoped servers are built once a run); the servers it
# forks import the openai SDK themselves, for the three tests that use it.
pytestmark = pytest.mark.xdist_group("test_serve_attacks")

QUESTION = "How do I rotate keys?"
KEYS = "SCOUT_TEST_KEYS"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    make_store(tmp_path).close()
    return tmp_path


def code(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


def serve(config: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    done = run_cli(["--config", str(config), "serve", *args], env={**os.environ, **(env or {})})
    return done.code, done.stderr + done.stdout


# -- keys fail open ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", [None, "", " ", ",", " , ,", "\t,\t"])
def test_a_key_variable_holding_no_key_refuses_to_start(corpus: Path, value: str | None) -> None:
    config = write_serve_config(corpus, api_keys_env="SCOUT_TEST_KEYS")
    env = {k: v for k, v in os.environ.items() if k != "SCOUT_TEST_KEYS"}
    if value is not None:
        env["SCOUT_TEST_KEYS"] = value
    done = run_cli(["--config", str(config), "serve", "--port", str(free_port())], env=env)
    assert done.code == 3
    (line,) = done.stderr.strip().splitlines()
    assert "serve.api_keys_env names SCOUT_TEST_KEYS, which holds no key" in line
    assert "serve.open = true" in line


def test_no_keys_on_an_address_other_than_loopback_refuses_to_start(corpus: Path) -> None:
    config = write_serve_config(corpus)
    code_, output = serve(config, "--host", "0.0.0.0", "--port", str(free_port()))
    assert code_ == 3 and "serving on 0.0.0.0 with no API keys" in output


def test_open_says_the_server_is_meant_to_need_no_key(corpus: Path) -> None:
    config = write_serve_config(corpus, api_keys_env="SCOUT_TEST_KEYS", open=True)
    with running(config, env={"SCOUT_TEST_KEYS": ""}) as server:
        asked = httpx.post(server.url + "/api/v1/ask", json={"question": QUESTION})
    assert asked.status_code == 200


def test_the_shipped_units_never_make_their_key_file_optional() -> None:
    units = Path(__file__).resolve().parent.parent / "config"
    for unit in sorted(units.glob("*.service")):
        lines = unit.read_text(encoding="utf-8").splitlines()
        files = [line for line in lines if line.startswith("EnvironmentFile=")]
        assert files and not any(line.startswith("EnvironmentFile=-") for line in files), unit


# -- scout serve --check ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("serve_keys", "args", "env", "exit_code", "finding"),
    [
        ({}, (), {}, 0, None),
        ({}, ("--host", "0.0.0.0"), {}, 3, "no API keys"),
        ({"open": True}, ("--host", "0.0.0.0"), {}, 0, "open: anyone who can reach"),
        ({"api_keys_env": KEYS}, (), {}, 3, "holds no key"),
        ({"api_keys_env": KEYS}, ("--host", "10.9.8.7"), {KEYS: "abc"}, 3, "shorter than 16"),
        ({"api_keys_env": KEYS}, ("--host", "10.9.8.7"), {KEYS: "k" * 20}, 0, None),
        ({"trusted_proxies": ["0.0.0.0/0"]}, (), {}, 3, "trusts every address"),
    ],
)
def test_check_prints_the_effective_settings_and_exits_3_when_unsafe(
    corpus: Path,
    serve_keys: dict[str, object],
    args: tuple[str, ...],
    env: dict[str, str],
    exit_code: int,
    finding: str | None,
) -> None:
    config = write_serve_config(corpus, allowed_hosts=["scout.test"], **serve_keys)
    environment = {k: v for k, v in os.environ.items() if k != "SCOUT_TEST_KEYS"} | env
    done = run_cli(["--config", str(config), "serve", "--check", "--json", *args], env=environment)
    assert done.code == exit_code, done.stderr
    report = done.json()
    assert set(report) >= {"host", "api_keys", "open", "allowed_hosts", "trusted_proxies"}
    assert report["limits"]["max_concurrent_answers_per_client"] == 1
    assert "scout.test" in report["allowed_hosts"] and "localhost" in report["allowed_hosts"]
    texts = [f["text"] for f in report["findings"]]
    assert finding is None or any(finding in text for text in texts), texts
    for key in env.values():
        assert key not in done.stdout and key not in done.stderr  # counted, never shown
    human = run_cli(["--config", str(config), "serve", "--check", *args], env=environment)
    assert human.code == exit_code and "allowed hosts:" in human.stdout


# -- the rate limit is chosen by the server, not the client -----------------------------------


def test_made_up_keys_and_forwarded_addresses_make_no_new_client(corpus: Path) -> None:
    config = write_serve_config(corpus, rate_limit="3/hour")
    with running(config) as server:
        statuses = [
            httpx.get(
                server.url + "/api/v1/search?q=keys",
                headers={"Authorization": f"Bearer made-up-{n}", "X-Forwarded-For": f"10.0.0.{n}"},
            ).status_code
            for n in range(5)
        ]
        log = server.stderr()
    assert statuses == [200, 200, 200, 429, 429]
    # a proxy left out of trusted_proxies is pointed out, once
    assert log.count("X-Forwarded-For from 127.0.0.1, which serve.trusted_proxies") == 1


def test_wrong_keys_are_rate_limited_per_address_and_real_keys_keep_theirs(corpus: Path) -> None:
    config = write_serve_config(corpus, rate_limit="3/hour", api_keys_env="SCOUT_TEST_KEYS")
    with running(config, env={"SCOUT_TEST_KEYS": "real-key"}) as server:
        guesses = [
            httpx.get(
                server.url + "/api/v1/search?q=keys", headers={"Authorization": f"Bearer g{n}"}
            ).status_code
            for n in range(5)
        ]
        mcp_guess = httpx.post(
            server.url + "/mcp", json={}, headers={"Authorization": "Bearer g9"}
        ).status_code
        real = httpx.get(
            server.url + "/api/v1/search?q=keys", headers={"Authorization": "Bearer real-key"}
        )
    assert guesses == [401, 401, 401, 429, 429] and mcp_guess == 429
    assert real.status_code == 200


def test_only_a_trusted_proxy_names_the_client(corpus: Path) -> None:
    config = write_serve_config(corpus, rate_limit="2/hour", trusted_proxies=["127.0.0.1"])
    with running(config) as server:

        def get(forwarded: str) -> int:
            headers = {"X-Forwarded-For": forwarded}
            return httpx.get(server.url + "/api/v1/search?q=keys", headers=headers).status_code

        # a client's own X-Forwarded-For entry before the proxy's is not believed
        one = [get(f"6.6.6.{n}, 198.51.100.1") for n in range(3)]
        two = [get("198.51.100.2") for _ in range(3)]
    assert one == [200, 200, 429] and two == [200, 200, 429]


# -- model calls end by the answer's deadline -------------------------------------------------


@contextmanager
def hostile_server(directory: Path, **serve_keys: object) -> Iterator[tuple[Server, FakeOpenAI]]:
    modes = {"hangq": "hang", "dribbleq": "dribble", "leakq": "leaky_500", "utfq": "bad_utf8"}
    with FakeOpenAI(modes=modes, dribble_seconds=0.1) as api:
        config = write_serve_config(
            directory,
            "openai",
            tables={
                "answer": {"base_url": api.url, "model": "m", "api_key_env": "SCOUT_NO_KEY"},
                "retrieval": {"expand": "model"},
            },
            rate_limit="1000/minute",
            answer_timeout=2,
            queue_timeout=3,
            max_concurrent_answers=1,
            **serve_keys,
        )
        with running(config) as server:
            yield server, api


def test_a_hanging_or_dribbling_model_frees_its_slot_at_answer_timeout(corpus: Path) -> None:
    with hostile_server(corpus) as (server, api):
        url = server.url
        hung = httpx.post(url + "/api/v1/ask", json={"question": "hangq rotate keys"}, timeout=60)
        # one answer slot: if the hung call still held it, this would wait 3 s and get 503
        after = httpx.post(url + "/api/v1/ask", json={"question": QUESTION}, timeout=60)
        dribbled = httpx.post(
            url + "/api/v1/ask", json={"question": "dribbleq rotate keys"}, timeout=60
        )
        again = httpx.post(url + "/api/v1/ask", json={"question": QUESTION}, timeout=60)
        metrics = httpx.get(url + "/metrics").text
    assert code(hung) == (504, "answer_timeout") and code(dribbled) == (504, "answer_timeout")
    assert after.status_code == 200 and again.status_code == 200
    # no hostile call was retried past the deadline, and none dribbled on after it (a loaded
    # machine may spend the whole deadline before a call is sent: then there is none)
    hostile = [e["mode"] for e in api.log if e["mode"] in ("hang", "dribble")]
    assert len(hostile) == len(set(hostile))
    assert all(e.get("sent", 0) <= 60 for e in api.log)
    assert 'scout_errors_total{code="answer_timeout"} 2.0' in metrics


def test_an_expanding_search_runs_in_a_slot_under_answer_timeout(corpus: Path) -> None:
    with hostile_server(corpus) as (server, api):
        found: list[httpx.Response] = []
        search = threading.Thread(
            target=lambda: found.append(
                httpx.get(server.url + "/api/v1/search?q=hangq+keys", timeout=60)
            )
        )
        search.start()
        while not api.log:
            time.sleep(0.01)
        # it holds the one answer slot, not a thread /healthz needs
        health = httpx.get(server.url + "/healthz", timeout=10)
        busy = httpx.post(server.url + "/api/v1/ask", json={"question": QUESTION}, timeout=60)
        search.join()
    assert health.status_code == 200
    assert code(found[0]) == (504, "answer_timeout")
    # this client's one slot was the search's: its ask waited for it, then was answered
    assert busy.status_code == 200


def test_the_public_502_says_nothing_of_the_provider(corpus: Path) -> None:
    with hostile_server(corpus) as (server, api):
        leaked = httpx.post(server.url + "/api/v1/ask", json={"question": "leakq rotate keys"})
        garbled = httpx.post(server.url + "/api/v1/ask", json={"question": "utfq rotate keys"})
        log = server.stderr()
    for response in (leaked, garbled):
        assert code(response) == (502, "provider_failed")
        assert LEAK not in response.text and api.url not in response.text
        assert "127.0.0.1" not in response.text
    assert LEAK in log  # the maintainer's log has it


def test_one_client_cannot_hold_every_answer_slot(corpus: Path) -> None:
    config = write_serve_config(
        corpus,
        "claude-local",
        api_keys_env="SCOUT_TEST_KEYS",
        max_concurrent_answers=2,
        queue_timeout=1,
        rate_limit="100/minute",
    )
    env = {**claude_on_path(corpus), "FAKE_CLAUDE_DELAY": "3", "SCOUT_TEST_KEYS": "a,b"}
    with running(config, env=env) as server:
        results: dict[str, list[int]] = {"a": [], "b": []}

        def ask(key: str) -> None:
            response = httpx.post(
                server.url + "/api/v1/ask",
                json={"question": QUESTION},
                headers={"Authorization": f"Bearer {key}"},
                timeout=60,
            )
            results[key].append(response.status_code)

        hog = [threading.Thread(target=ask, args=("a",)) for _ in range(3)]
        for thread in hog:
            thread.start()
        time.sleep(0.3)  # the hog's asks arrive first
        other = threading.Thread(target=ask, args=("b",))
        other.start()
        for thread in [*hog, other]:
            thread.join()
    assert sorted(results["a"]) == [200, 429, 429]
    assert results["b"] == [200]


# -- who may call -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("guarded")
    make_store(directory).close()
    config = write_serve_config(
        directory,
        rate_limit="10000/minute",
        allowed_hosts=["scout.test"],
        cors_origins=["https://chat.test"],
    )
    with running(config) as server:
        yield server


ASK = json.dumps({"question": QUESTION}).encode()
JSON_TYPE = {"content-type": "application/json"}
FORM = {"content-type": "application/x-www-form-urlencoded"}
EVIL = {"origin": "https://evil.test"}
MISDIRECTED = (421, "misdirected_request")
MEDIA = (415, "unsupported_media_type")
CROSS = (403, "forbidden_origin")
MCP_LIST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
MCP_HEADERS = {**JSON_TYPE, "accept": "application/json, text/event-stream"}


@pytest.mark.parametrize(
    ("method", "path", "headers", "body", "expected"),
    [
        # DNS rebinding: another name resolving here cannot read or post
        ("GET", "/", {"host": "evil.test"}, b"", MISDIRECTED),
        ("GET", "/api/v1/search?q=keys", {"host": "evil.test:80"}, b"", MISDIRECTED),
        ("POST", "/api/v1/ask", {"host": "evil.test", **JSON_TYPE}, ASK, MISDIRECTED),
        ("POST", "/mcp", {"host": "evil.test", **MCP_HEADERS}, MCP_LIST, MISDIRECTED),
        ("GET", "/healthz", {"host": "evil.test"}, b"", MISDIRECTED),
        ("GET", "/api/v1/search?q=keys", {"host": "scout.test"}, b"", 200),
        ("GET", "/api/v1/search?q=keys", {"host": "localhost"}, b"", 200),
        ("POST", "/mcp", {"host": "scout.test", **MCP_HEADERS}, MCP_LIST, 200),
        # a body that is neither JSON nor the page's form: no simple cross-site post gets in
        ("POST", "/api/v1/ask", {"content-type": "text/plain"}, ASK, MEDIA),
        ("POST", "/api/v1/ask", FORM, ASK, MEDIA),
        ("POST", "/api/v1/ask", {}, ASK, MEDIA),
        ("POST", "/", JSON_TYPE, ASK, MEDIA),
        ("POST", "/mcp", {"content-type": "text/plain"}, MCP_LIST, MEDIA),
        ("POST", "/api/v1/ask", {"content-type": "application/json; charset=utf-8"}, ASK, 200),
        # another site's page
        ("POST", "/api/v1/ask", {**EVIL, **JSON_TYPE}, ASK, CROSS),
        ("POST", "/", {**EVIL, **FORM}, b"question=keys", CROSS),
        ("POST", "/api/v1/ask", {"sec-fetch-site": "cross-site", **JSON_TYPE}, ASK, CROSS),
        ("POST", "/mcp", {**EVIL, **MCP_HEADERS}, MCP_LIST, CROSS),
        ("DELETE", "/mcp", EVIL, b"", CROSS),
        ("POST", "/api/v1/ask", {"origin": "https://chat.test", **JSON_TYPE}, ASK, 200),
        ("POST", "/api/v1/ask", {"origin": "https://scout.test", **JSON_TYPE}, ASK, 200),
        ("POST", "/api/v1/ask", {"sec-fetch-site": "same-origin", **JSON_TYPE}, ASK, 200),
        # a cross-site link to the page still opens it
        ("GET", "/", {"sec-fetch-site": "cross-site"}, b"", 200),
    ],
)
def test_host_content_type_and_origin_decide_who_may_call(
    guarded: Server,
    method: str,
    path: str,
    headers: dict[str, str],
    body: bytes,
    expected: int | tuple[int, str],
) -> None:
    response = httpx.request(method, guarded.url + path, headers=headers, content=body)
    if isinstance(expected, int):
        assert response.status_code == expected, response.text
    else:
        assert code(response) == expected


def test_the_page_s_own_form_and_same_origin_posts_pass(guarded: Server) -> None:
    own = {"origin": guarded.url, "content-type": "application/x-www-form-urlencoded"}
    page = httpx.post(guarded.url + "/", content=b"question=rotate+keys", headers=own)
    assert page.status_code == 200 and 'class="citation"' in page.text


def test_a_request_with_no_host_header_is_misdirected(guarded: Server) -> None:
    port = int(guarded.url.rsplit(":", 1)[1])
    reply = raw_request(port, b"GET /healthz HTTP/1.0\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 421")


def test_mcp_follows_the_host_scout_listens_on(corpus: Path) -> None:
    # the config says 127.0.0.1; --host says 127.0.0.2 (loopback too): MCP answers there
    config = write_serve_config(corpus)
    port = free_port()
    with served_at(config, "127.0.0.2", port):
        listed = httpx.post(f"http://127.0.0.2:{port}/mcp", content=MCP_LIST, headers=MCP_HEADERS)
    assert listed.status_code == 200 and "ask_docs" in listed.text


@contextmanager
def served_at(
    config: Path, host: str, port: int, *, files: int | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """``scout serve`` on ``host:port``, under a file limit when ``files`` is given."""

    def limit() -> None:
        if files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))

    log = config.parent / f"serve-{port}.log"
    with open(log, "wb") as err:
        process = subprocess.Popen(
            [*SCOUT, "--config", str(config), "serve", "--host", host, "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=err,
            cwd=config.parent,
            preexec_fn=limit,  # noqa: PLW1509 - sets an rlimit only, before exec
        )
    try:
        wait_until_up(f"http://{host}:{port}", process, log)  # type: ignore[arg-type]
        yield process
    finally:
        process.terminate()
        process.wait(30)


# -- connections ------------------------------------------------------------------------------


def raw_request(port: int, data: bytes, host: str = "127.0.0.1") -> bytes:
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_idle_connections_past_the_file_limit_leave_healthz_answering_and_the_log_small(
    corpus: Path,
) -> None:
    # 1,100 connections that send nothing, against a server that may open 1,024 files: without
    # a cap, accept() failed on every connection after and asyncio logged each failure
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 4_096:  # this side holds the 1,100 sockets too
        if hard != resource.RLIM_INFINITY and hard < 4_096:
            pytest.skip(f"the test needs 4,096 open files; the hard limit is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (4_096, hard))
    config = write_serve_config(corpus, header_timeout=2)
    port = free_port()
    log = corpus / f"serve-{port}.log"
    idle: list[socket.socket] = []
    with served_at(config, "127.0.0.1", port, files=1024):
        try:
            for _ in range(1_100):
                idle.append(socket.create_connection(("127.0.0.1", port), timeout=10))
            health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=30)
            metrics = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=30).text
            # every idle one is closed by header_timeout at the latest
            for sock in idle:
                sock.settimeout(30)
                assert sock.recv(1) == b""
        finally:
            for sock in idle:
                sock.close()
    assert health.status_code == 200
    assert 'scout_connections_closed_total{reason="evicted"}' in metrics
    assert log.stat().st_size < 50_000, log.read_text()[-2000:]


@pytest.mark.parametrize(
    "opening",
    [
        b"",  # a request line a byte at a time
        b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ",  # headers a byte at a time
        b"POST /api/v1/ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 60000\r\n\r\n{",  # a body a byte at a time
    ],
)
def test_a_slow_client_is_cut_off_at_header_timeout(guarded_slow: int, opening: bytes) -> None:
    with socket.create_connection(("127.0.0.1", guarded_slow), timeout=30) as sock:
        sock.sendall(opening)
        sent = 0
        try:
            while sent < 200:  # 200 bytes at 20 a second: 10 s, five header_timeouts
                sock.sendall(b"a")
                sent += 1
                time.sleep(0.05)
            closed = sock.recv(1) == b""
        except (BrokenPipeError, ConnectionResetError):
            closed = True
    assert closed and sent < 100


@pytest.fixture(scope="module")
def guarded_slow(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    directory = tmp_path_factory.mktemp("slow")
    make_store(directory).close()
    config = write_serve_config(directory, header_timeout=2)
    with running(config) as server:
        yield int(server.url.rsplit(":", 1)[1])


def test_a_flood_of_malformed_requests_leaves_a_few_log_lines(corpus: Path) -> None:
    config = write_serve_config(corpus)
    with running(config) as server:
        port = int(server.url.rsplit(":", 1)[1])
        for _ in range(150):
            raw_request(port, b"NOT HTTP AT ALL\r\n\r\n")
        for n in range(150):
            httpx.get(server.url + "/healthz", headers={"host": f"evil{n}.test"})
        log = server.stderr()
    assert log.count("Invalid HTTP request") <= 11
    assert len(log) < 20_000


# -- the gap backlog --------------------------------------------------------------------------


def test_gaps_rank_by_distinct_askers_and_the_route_is_paged(corpus: Path) -> None:
    config = write_serve_config(
        corpus,
        api_keys_env="SCOUT_TEST_KEYS",
        maintainer_keys_env="SCOUT_TEST_MAINT",
        rate_limit="100/minute",
    )
    env = {"SCOUT_TEST_KEYS": "k1,k2,k3", "SCOUT_TEST_MAINT": "m"}
    repeated, shared = "what is the weather in Lisbon", "how do I feed the office cat"
    with running(config, env=env) as server:

        def ask(key: str, question: str) -> None:
            headers = {"Authorization": f"Bearer {key}"}
            response = httpx.post(
                server.url + "/api/v1/ask", json={"question": question}, headers=headers
            )
            assert response.status_code == 200

        for _ in range(5):
            ask("k1", repeated)  # one client, five times
        ask("k2", shared)
        ask("k3", shared)
        maintainer = {"Authorization": "Bearer m"}
        backlog = httpx.get(server.url + "/api/v1/gaps", headers=maintainer).json()
        second = httpx.get(server.url + "/api/v1/gaps?limit=1&page=2", headers=maintainer).json()
        bad = [
            httpx.get(server.url + f"/api/v1/gaps?{query}", headers=maintainer).status_code
            for query in ("limit=0", "limit=501", "page=0", "limit=x", "page=1e3", "limit=%C2%B2")
        ]
    assert [(g["question"], g["askers"], g["asked"]) for g in backlog] == [
        (shared, 2, 2),
        (repeated, 1, 5),
    ]
    assert [g["question"] for g in second] == [repeated]
    assert bad == [400] * 6
    with Store.open(corpus / "scout.db") as store:
        askers = {row.asker for row in store.questions()}
    assert len(askers) == 3 and not askers & {"k1", "k2", "k3"}  # hashed, never the key


# -- errors: the documented status, never a traceback ----------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"question": ' + b"9" * 5000 + b"}", (400, "bad_request")),
        (b'{"question": "keys \\ud800"}', (400, "bad_question")),
        (b'{"question": "keys", "project": ["acme/\\udfff"]}', (400, "bad_request")),
        (b'{"question": "keys", "limit": ' + b"1" * 5000 + b"}", (400, "bad_request")),
    ],
)
def test_huge_integers_and_lone_surrogates_in_a_body_are_400(
    guarded: Server, body: bytes, expected: tuple[int, str]
) -> None:
    response = httpx.post(guarded.url + "/api/v1/ask", content=body, headers=JSON_TYPE)
    assert code(response) == expected


@pytest.mark.parametrize("path", ["/mcp", "/api/v1/ask"])
def test_a_chunked_body_over_the_limit_is_413(guarded: Server, path: str) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "x": "'
        for _ in range(100):
            yield b"a" * 1024

    response = httpx.post(guarded.url + path, content=chunks(), headers=MCP_HEADERS)
    assert code(response) == (413, "body_too_large")
    assert "Traceback" not in guarded.stderr()


def test_a_store_path_with_a_nul_is_exit_3(corpus: Path) -> None:
    config = write_serve_config(corpus, tables={"store": {"path": "scout\u0000.db"}})
    done = run_cli(["--config", str(config), "ask", QUESTION])
    assert done.code == 3 and "store.path: a path cannot hold a NUL character" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_malformed_compare_files_are_exit_3(tmp_path: Path) -> None:
    good = {key: {} for key in ("bands", "citations", "retrieval", "floor", "cost", "latency_ms")}
    files = {
        "deep.json": "[" * 100_000 + "]" * 100_000,
        "huge.json": '{"bands": ' + "9" * 5000 + "}",
        "nested.json": json.dumps({**good, "bands": _nested(50)}),
        "bytes.json": b"\xff\xfe{}",
    }
    for name, content in files.items():
        target = tmp_path / name
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
        done = run_cli(["eval", "--compare", str(target), str(target)], cwd=tmp_path)
        assert done.code == 3, (name, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def _nested(depth: int) -> dict[str, Any]:
    inner: dict[str, Any] = {"n": 1}
    for _ in range(depth):
        inner = {"x": inner}
    return inner


def test_the_sweep_lock_never_follows_a_link_or_truncates_its_target(tmp_path: Path) -> None:
    from ingest.lock import sweep_lock
    from scout.errors import StoreError

    precious = tmp_path / "precious.txt"
    precious.write_text("keep me", encoding="utf-8")
    store = tmp_path / "scout.db"
    (tmp_path / "scout.db.sweep.lock").symlink_to(precious)
    with pytest.raises(StoreError, match="is a symbolic link"):
        with sweep_lock(store):
            pass
    other = tmp_path / "other.db"
    os.link(precious, tmp_path / "other.db.sweep.lock")  # a hard link: a second name
    with pytest.raises(StoreError, match="not a plain file"):
        with sweep_lock(other):
            pass
    assert precious.read_text(encoding="utf-8") == "keep me"
