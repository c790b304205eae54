"""``scout serve`` on loopback: the real server in a subprocess, real HTTP clients (httpx).

Every status code of docs/design.md's "Serving questions", the documents equal to the CLI's,
limits under concurrency, an index written while serving, and SIGTERM draining answers.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from scout.store import Store
from tests.fakes.corpus import BACKUPS, CREDENTIALS, DEPLOY, filler, make_store
from tests.fakes.serving import SCOUT, claude_on_path, running, write_serve_config
from tests.helpers.demo import demo_estate
from tests.helpers.run import Started, run_cli

# One worker runs the module: its demo store and server are module fixtures, built once a run
# rather than once a worker (--dist loadgroup, as scripts/test runs).
pytestmark = pytest.mark.xdist_group("test_serve")

ERROR_KEYS = {"error"}


def error(response: httpx.Response) -> dict[str, Any]:
    body = response.json()
    assert set(body) == ERROR_KEYS and set(body["error"]) == {"code", "message"}
    return dict(body["error"])


def cli_json(config: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    import os

    done = run_cli(["--config", str(config), *args, "--json"], env={**os.environ, **(env or {})})
    assert done.code == 0, done.stderr
    return done.json()


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    make_store(tmp_path).close()
    return tmp_path


def test_documents_are_the_cli_ones_and_a_decline_is_a_200(corpus: Path) -> None:
    config = write_serve_config(corpus)
    questions = [
        "How do I rotate keys?",
        "what is the weather in Lisbon",
        "How do I rotate backups to tape storage?",
    ]
    with running(config) as server:
        for question in questions:
            response = httpx.post(server.url + "/api/v1/ask", json={"question": question})
            assert response.status_code == 200
            assert response.json() == cli_json(config, "ask", question)
        response = httpx.get(server.url + "/api/v1/search", params={"q": questions[0]})
        assert response.status_code == 200
        assert response.json() == cli_json(config, "search", questions[0])
        two = httpx.get(server.url + "/api/v1/search", params={"q": "backups keys", "limit": 2})
        assert two.json() == cli_json(config, "search", "backups keys", "--limit", "2")
        # project globs scope both, as --project does
        scoped = httpx.post(
            server.url + "/api/v1/ask", json={"question": questions[0], "project": ["acme/ops"]}
        )
        assert scoped.json() == cli_json(config, "ask", questions[0], "--project", "acme/ops")
        params = [("q", "backups keys"), ("project", "acme/config"), ("project", "acme/ops")]
        found = httpx.get(server.url + "/api/v1/search", params=params).json()
        assert found == cli_json(
            config, "search", "backups keys", "--project", "acme/config", "--project", "acme/ops"
        )
        assert {row["project"] for row in found} == {"acme/config", "acme/ops"}
    # every question asked through the server is in the question log, as scout ask logs it
    with Store.open(corpus / "scout.db") as store:
        asked = [row.question for row in store.questions()]
    assert asked.count(questions[0]) == 4 and asked.count(questions[1]) == 2


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b'{"question": "?! ..."}', 400, "bad_question"),
        (b'{"question": 12}', 400, "bad_request"),
        (b'{"asked": "x"}', 400, "bad_request"),
        (b'["question"]', 400, "bad_request"),
        (b"not json", 400, "bad_request"),
        (b"", 400, "bad_request"),
        (b'{"question": "\\ud800"}', 400, "bad_question"),
        (b"[" * 100_000, 413, "body_too_large"),
        (b"[" * 60_000, 400, "bad_request"),
        (b'{"question": "' + b"\\u0000" * 1000 + b'"}', 400, "bad_question"),
        (json.dumps({"question": "keys " * 500}).encode(), 413, "question_too_long"),
        (b'{"question": "keys", "project": [1]}', 400, "bad_request"),
        (b'{"question": "keys", "project": {"a": 1}}', 400, "bad_request"),
    ],
)
def test_malformed_asks_get_their_status_and_one_error_shape(
    shared_server: Any, body: bytes, status: int, code: str
) -> None:
    response = httpx.post(
        shared_server.url + "/api/v1/ask",
        content=body,
        headers={"content-type": "application/json"},
    )
    assert (response.status_code, error(response)["code"]) == (status, code)


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One server for the table tests that change nothing (a high rate limit)."""
    directory = tmp_path_factory.mktemp("shared")
    make_store(directory).close()
    config = write_serve_config(directory, rate_limit="1000/minute", max_question_chars=2000)
    with running(config) as server:
        yield server


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("GET", "/api/v1/search", 400, "bad_request"),
        ("GET", "/api/v1/search?q=keys&limit=0", 400, "bad_request"),
        ("GET", "/api/v1/search?q=keys&limit=101", 400, "bad_request"),
        ("GET", "/api/v1/search?q=keys&limit=x", 400, "bad_request"),
        ("GET", "/api/v1/search?q=%21%3F", 400, "bad_question"),
        ("GET", "/api/v1/gaps", 404, "not_found"),
        ("GET", "/api/v1/signposts", 404, "not_found"),
        ("GET", "/api/v1/nothing", 404, "not_found"),
        ("GET", "/api/v1/ask", 405, "method_not_allowed"),
    ],
)
def test_other_statuses(shared_server: Any, method: str, path: str, status: int, code: str) -> None:
    response = httpx.request(method, shared_server.url + path)
    assert (response.status_code, error(response)["code"]) == (status, code)


def test_healthz_counts_and_503_once_the_store_is_gone(tmp_path: Path) -> None:
    make_store(tmp_path).close()
    config = write_serve_config(tmp_path)
    with running(config) as server:
        health = httpx.get(server.url + "/healthz")
        assert health.status_code == 200
        assert health.json() == {
            "status": "ok",
            "passages": 43,
            "projects": 0,
            "indexed_at": None,
        }
        for name in ("scout.db", "scout.db-wal", "scout.db-shm"):
            (tmp_path / name).unlink(missing_ok=True)
        gone = httpx.get(server.url + "/healthz")
        assert gone.status_code == 503
        assert gone.json()["status"] == "unavailable"
        assert gone.json()["error"]["code"] == "store_unavailable"


def test_keys_401_then_200_and_maintainer_routes(corpus: Path) -> None:
    config = write_serve_config(
        corpus, api_keys_env="SCOUT_TEST_KEYS", maintainer_keys_env="SCOUT_TEST_MAINT"
    )
    env = {"SCOUT_TEST_KEYS": "alpha, beta", "SCOUT_TEST_MAINT": "gamma"}
    ask = {"question": "what is the weather in Lisbon"}
    with running(config, env=env) as server:
        url = server.url
        assert error(httpx.post(url + "/api/v1/ask", json=ask))["code"] == "unauthorized"
        wrong = httpx.post(url + "/api/v1/ask", json=ask, headers={"Authorization": "Bearer x"})
        assert wrong.status_code == 401
        for key in ("alpha", "beta", "gamma"):
            good = httpx.post(url + "/api/v1/ask", json=ask, headers={"X-Scout-Key": key})
            assert good.status_code == 200
        assert httpx.get(url + "/api/v1/search?q=keys").status_code == 401
        assert httpx.post(url + "/mcp", json={}).status_code == 401
        user = {"Authorization": "Bearer alpha"}
        maintainer = {"Authorization": "Bearer gamma"}
        assert httpx.get(url + "/api/v1/gaps").status_code == 401
        assert error(httpx.get(url + "/api/v1/gaps", headers=user))["code"] == "forbidden"
        gaps = httpx.get(url + "/api/v1/gaps", headers=maintainer)
        assert gaps.status_code == 200
        assert gaps.json() == cli_json(config, "gaps", env=env)
        assert [group["question"] for group in gaps.json()] == [ask["question"]]
        signposts = httpx.get(url + "/api/v1/signposts?status=all", headers=maintainer)
        assert signposts.json() == cli_json(config, "signposts", "--status", "all", env=env)
        for bad in ("status=nope", "limit=0", "limit=x", "since=someday"):
            response = httpx.get(url + "/api/v1/signposts?" + bad, headers=maintainer)
            assert (response.status_code, error(response)["code"]) == (400, "bad_request")
        # the page asks for the key when one is needed, and takes it from the form
        assert 'type="password" id="key" name="key"' in httpx.get(url + "/").text
        page = httpx.post(url + "/", data={"question": "How do I rotate keys?", "key": "beta"})
        assert page.status_code == 200 and 'class="citation"' in page.text
        keyless = httpx.post(url + "/", data={"question": "How do I rotate keys?"})
        assert keyless.status_code == 401 and "send an API key" in keyless.text
        # healthz and metrics are for the operator's probes: no key
        assert httpx.get(url + "/healthz").status_code == 200
        assert httpx.get(url + "/metrics").status_code == 200


def test_rate_limit_per_client_429_with_retry_after(corpus: Path) -> None:
    config = write_serve_config(corpus, rate_limit="3/minute", api_keys_env="SCOUT_TEST_KEYS")
    env = {"SCOUT_TEST_KEYS": "one,two"}
    with running(config, env=env) as server:
        one = {"Authorization": "Bearer one"}
        codes = [
            httpx.get(server.url + "/api/v1/search?q=keys", headers=one).status_code
            for _ in range(4)
        ]
        assert codes == [200, 200, 200, 429]
        limited = httpx.post(server.url + "/api/v1/ask", json={"question": "keys"}, headers=one)
        assert limited.status_code == 429 and error(limited)["code"] == "rate_limited"
        assert 1 <= int(limited.headers["Retry-After"]) <= 60
        # another key is another client
        two = {"Authorization": "Bearer two"}
        assert httpx.get(server.url + "/api/v1/search?q=keys", headers=two).status_code == 200
        metrics = httpx.get(server.url + "/metrics").text
        assert 'scout_errors_total{code="rate_limited"} 2.0' in metrics


def test_rate_limit_by_address_without_keys(corpus: Path) -> None:
    config = write_serve_config(corpus, rate_limit="2/hour")
    with running(config) as server:
        codes = [httpx.get(server.url + "/api/v1/search?q=keys").status_code for _ in range(3)]
        assert codes == [200, 200, 429]
        page = httpx.post(server.url + "/", data={"question": "keys"})
        assert page.status_code == 429 and "Retry-After" in page.headers


def _spans(path: Path) -> list[tuple[float, float]]:
    if not path.exists():
        return []
    return [
        (float(a), float(b)) for a, b in (line.split() for line in path.read_text().splitlines())
    ]


def _most_at_once(spans: list[tuple[float, float]]) -> int:
    events = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans])
    most = now = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


def _ask_all(url: str, questions: list[str]) -> list[httpx.Response]:
    responses: list[httpx.Response] = [None] * len(questions)  # type: ignore[list-item]

    def one(i: int) -> None:
        responses[i] = httpx.post(url + "/api/v1/ask", json={"question": questions[i]}, timeout=120)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(questions))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return responses


def test_answers_in_flight_never_exceed_the_slots(corpus: Path) -> None:
    config = write_serve_config(
        corpus,
        "claude-local",
        max_concurrent_answers=2,
        max_concurrent_answers_per_client=6,
        rate_limit="100/minute",
    )
    env = {**claude_on_path(corpus), "FAKE_CLAUDE_DELAY": "0.5"}
    with running(config, env=env) as server:
        responses = _ask_all(server.url, ["How do I rotate keys?"] * 6)
        assert [r.status_code for r in responses] == [200] * 6
        assert all(r.json()["outcome"] == "answered" for r in responses)
        metrics = httpx.get(server.url + "/metrics").text
    spans = _spans(corpus / "claude-spans")
    # the first two ask for search terms (at once, each in its slot), then answer; the other
    # four find the terms in the store's cache and only answer
    assert len(spans) == 8
    assert _most_at_once(spans) == 2
    assert 'scout_questions_total{outcome="answered"} 6.0' in metrics
    assert "scout_answer_seconds_count 6.0" in metrics


def test_busy_slots_503_with_retry_after_after_the_wait(corpus: Path) -> None:
    config = write_serve_config(
        corpus,
        "claude-local",
        max_concurrent_answers=1,
        max_concurrent_answers_per_client=2,
        queue_timeout=1,
        rate_limit="100/minute",
    )
    env = {**claude_on_path(corpus), "FAKE_CLAUDE_DELAY": "4"}
    with running(config, env=env) as server:
        responses = _ask_all(server.url, ["How do I rotate keys?"] * 2)
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200, 503]
    busy = next(r for r in responses if r.status_code == 503)
    assert error(busy)["code"] == "busy" and busy.headers["Retry-After"] == "1"


def test_provider_failure_is_a_502_and_logged_as_an_incident(corpus: Path) -> None:
    config = write_serve_config(corpus, "claude-local")
    env = {**claude_on_path(corpus), "FAKE_CLAUDE_MODE": "is_error"}
    with running(config, env=env) as server:
        response = httpx.post(server.url + "/api/v1/ask", json={"question": "rotate keys"})
        declined = httpx.post(server.url + "/api/v1/ask", json={"question": "weather Lisbon"})
        metrics = httpx.get(server.url + "/metrics").text
    assert response.status_code == 502 and error(response)["code"] == "provider_failed"
    # nothing retrieved is a decline without the provider: not an incident
    assert declined.status_code == 200 and declined.json()["reason"] == "nothing matched"
    assert "provider failed" in server.stderr()
    assert 'scout_errors_total{code="provider_failed"} 1.0' in metrics
    with Store.open(corpus / "scout.db") as store:
        assert [row.question for row in store.questions()] == ["weather Lisbon"]


def test_an_answer_past_the_timeout_is_a_504_and_its_slot_comes_back(corpus: Path) -> None:
    config = write_serve_config(
        corpus, "claude-local", answer_timeout=1, max_concurrent_answers=1, queue_timeout=30
    )
    # the second question must need no model call: no search terms are asked for either
    config.write_text(config.read_text() + '\n[retrieval]\nexpand = "off"\n')
    env = {**claude_on_path(corpus), "FAKE_CLAUDE_MODE": "hang"}
    with running(config, env=env) as server:
        slow = httpx.post(server.url + "/api/v1/ask", json={"question": "rotate keys"})
        assert slow.status_code == 504 and error(slow)["code"] == "answer_timeout"
        # the provider was stopped at the same timeout, so the one slot is free again
        again = httpx.post(server.url + "/api/v1/ask", json={"question": "weather Lisbon"})
        assert again.status_code == 200


def test_passages_indexed_while_serving_are_served_without_restart(tmp_path: Path) -> None:
    make_store(tmp_path, filler()).close()
    config = write_serve_config(tmp_path)
    question = {"question": "How do I rotate keys?"}
    with running(config) as server:
        before = httpx.post(server.url + "/api/v1/ask", json=question).json()
        assert before["outcome"] == "declined"
        # another process writes, as scout index does: one transaction on the same file
        subprocess.run(
            [
                sys.executable,
                "-c",
                "from pathlib import Path; from scout.store import Store; "
                "from tests.fakes.corpus import CREDENTIALS, BACKUPS, DEPLOY; "
                f"s = Store.open(Path({str(tmp_path / 'scout.db')!r})); "
                "s.insert_passages([CREDENTIALS, BACKUPS, DEPLOY]); s.close()",
            ],
            check=True,
            cwd=Path(__file__).parent.parent,
        )
        after = httpx.post(server.url + "/api/v1/ask", json=question).json()
        health = httpx.get(server.url + "/healthz").json()
    assert after["outcome"] == "answered"
    assert after["citations"][0]["path"] == CREDENTIALS.path
    assert health["passages"] == len(filler()) + len([CREDENTIALS, BACKUPS, DEPLOY])
    assert DEPLOY.path and BACKUPS.path


def test_sigterm_drains_answers_in_flight_and_exits_0(corpus: Path) -> None:
    config = write_serve_config(
        corpus, "claude-local", max_concurrent_answers=4, max_concurrent_answers_per_client=4
    )
    env = {**claude_on_path(corpus), "FAKE_CLAUDE_DELAY": "3"}
    pids = corpus / "claude-pids"
    with running(config, env=env, args=("--json",)) as server:
        results: list[httpx.Response] = []
        threads = [
            threading.Thread(
                target=lambda: results.append(
                    httpx.post(
                        server.url + "/api/v1/ask",
                        json={"question": "How do I rotate keys?"},
                        timeout=60,
                    )
                )
            )
            for _ in range(2)
        ]
        for thread in threads:
            thread.start()
        _wait_for(lambda: pids.exists() and len(pids.read_text().split()) == 2, server.process)
        code = server.stop(signal.SIGTERM)
        for thread in threads:
            thread.join()
    assert code == 0
    assert json.loads(server.stdout()) == {"questions": {"answered": 2, "declined": 0}}
    assert [r.status_code for r in results] == [200, 200]
    assert all(r.json()["outcome"] == "answered" for r in results)
    with pytest.raises(httpx.TransportError):
        httpx.get(server.url + "/healthz")


def _wait_for(condition: Any, process: Started) -> None:
    import time

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"condition not met (exit {process.poll()})")


def test_cors_only_for_configured_origins(corpus: Path) -> None:
    config = write_serve_config(corpus, cors_origins=["https://chat.acme.example"])
    with running(config) as server:
        preflight = {"Access-Control-Request-Method": "POST"}
        allowed = httpx.options(
            server.url + "/api/v1/ask",
            headers={"Origin": "https://chat.acme.example", **preflight},
        )
        other = httpx.options(
            server.url + "/api/v1/ask", headers={"Origin": "https://evil.example", **preflight}
        )
        simple = httpx.get(
            server.url + "/api/v1/search?q=keys", headers={"Origin": "https://evil.example"}
        )
    assert allowed.headers["access-control-allow-origin"] == "https://chat.acme.example"
    assert "access-control-allow-origin" not in other.headers
    assert "access-control-allow-origin" not in simple.headers


def test_without_cors_origins_no_cors_headers(shared_server: Any) -> None:
    response = httpx.get(
        shared_server.url + "/api/v1/search?q=keys", headers={"Origin": "https://a.example"}
    )
    assert response.status_code == 200
    assert not any(name.startswith("access-control") for name in response.headers)


def test_every_response_has_the_strict_csp_and_no_cookie(shared_server: Any) -> None:
    for path in ("/", "/healthz", "/api/v1/search?q=keys", "/nothing", "/static/page.css"):
        response = httpx.get(shared_server.url + path)
        csp = response.headers["content-security-policy"]
        assert "'unsafe-inline'" not in csp and "'unsafe-eval'" not in csp and "*" not in csp
        assert "object-src 'none'" in csp and "script-src 'none'" in csp
        assert "set-cookie" not in response.headers


def test_missing_store_is_exit_4_before_serving(tmp_path: Path) -> None:
    config = write_serve_config(tmp_path)
    done = subprocess.run(
        [*SCOUT, "--config", str(config), "serve", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 4 and "run `scout index` first" in done.stderr


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('rate_limit = "lots"', "serve.rate_limit: expected a rate such as '30/minute'"),
        ('rate_limit = "0/minute"', "serve.rate_limit"),
        ("max_concurrent_answers = 0", "serve.max_concurrent_answers"),
        ('cors_origins = ["*"]', "serve.cors_origins"),
        ("port = 70000", "serve.port"),
        ('hots = "x"', "serve.hots: unknown key"),
    ],
)
def test_bad_serve_config_is_exit_3(tmp_path: Path, table: str, message: str) -> None:
    make_store(tmp_path).close()
    config = write_serve_config(tmp_path)
    config.write_text(config.read_text() + table + "\n")
    done = subprocess.run(
        [*SCOUT, "--config", str(config), "serve"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 3 and message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


DEMO_CONFIG = Path(__file__).parent.parent / "config" / "demo.toml"


def test_maintainer_routes_on_the_swept_demo_equal_the_cli(tmp_path: Path) -> None:
    demo_estate(tmp_path / "estate")
    config = tmp_path / "scout.toml"
    config.write_text(
        DEMO_CONFIG.read_text() + '\n[serve]\nmaintainer_keys_env = "SCOUT_TEST_MAINT"\n',
        encoding="utf-8",
    )
    for command in ("index", "sweep"):
        cli_json(config, command)
    env = {"SCOUT_TEST_MAINT": "m"}
    key = {"Authorization": "Bearer m"}
    with running(config, env=env) as server:
        for query, args in [
            ("", ()),
            ("?status=all", ("--status", "all")),
            ("?status=accepted", ("--status", "accepted")),
            ("?status=all&project=acme/ledger", ("--status", "all", "--project", "acme/ledger")),
            ("?status=all&limit=2", ("--status", "all", "--limit", "2")),
        ]:
            response = httpx.get(server.url + "/api/v1/signposts" + query, headers=key)
            assert response.status_code == 200
            assert response.json() == cli_json(config, "signposts", *args, env=env), query
        everything = httpx.get(server.url + "/api/v1/signposts?status=all", headers=key).json()
        health = httpx.get(server.url + "/healthz").json()
    assert len(everything) > 2 and {row["status"] for row in everything} >= {"accepted"}
    assert health["projects"] > 0 and health["indexed_at"] is not None


def test_sigterm_with_an_answer_that_never_ends_still_exits_0_and_kills_the_provider(
    corpus: Path,
) -> None:
    config = write_serve_config(corpus, "claude-local", answer_timeout=600)
    env = {**claude_on_path(corpus), "FAKE_CLAUDE_MODE": "hang"}
    pids = corpus / "claude-pids"
    with running(config, env=env) as server:
        results: list[httpx.Response] = []
        thread = threading.Thread(
            target=lambda: results.append(
                httpx.post(server.url + "/api/v1/ask", json={"question": "rotate keys"}, timeout=60)
            )
        )
        thread.start()
        _wait_for(lambda: pids.exists() and pids.read_text().split(), server.process)
        code = server.stop(signal.SIGTERM)
        thread.join()
    assert code == 0
    assert results[0].status_code == 503 and error(results[0])["code"] == "stopping"
    assert results[0].headers["Retry-After"] == "10"
    assert not _alive(int(pids.read_text().split()[0]))


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return status.split(") ", 1)[1][0] != "Z"  # a zombie has ended


def test_a_model_failing_at_expansion_is_counted_and_the_answer_still_comes(
    corpus: Path,
) -> None:
    config = write_serve_config(corpus, "claude-local", rate_limit="100/minute")
    env = {**claude_on_path(corpus), "FAKE_CLAUDE_EXPAND_MODE": "is_error"}
    with running(config, env=env) as server:
        asked = httpx.post(server.url + "/api/v1/ask", json={"question": "How do I rotate keys?"})
        found = httpx.get(server.url + "/api/v1/search", params={"q": "restore a backup"})
        metrics = httpx.get(server.url + "/metrics").text
    assert asked.status_code == 200 and asked.json()["outcome"] == "answered"
    assert asked.json()["expansion_error"] == "provider_failed"
    assert found.status_code == 200 and found.json()[0]["expansion_error"] == "provider_failed"
    line = 'scout_retrieval_fallbacks_total{code="provider_failed",stage="expansion"} 2.0'
    assert line in metrics
