"""The MCP tools through the SDK's own client: ``scout mcp`` over stdio, ``/mcp`` over HTTP.

Each tool's text is the API's JSON document (checked against ``scout ask --json`` and ``scout
search --json``), and the limits are the API's: a refusal is a tool error holding the API's
error document.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.fakes.corpus import make_store
from tests.fakes.serving import running, write_serve_config
from tests.helpers.run import run_cli

QUESTION = "How do I rotate keys?"


def cli_json(config: Path, *args: str) -> Any:
    done = run_cli(["--config", str(config), *args, "--json"])
    assert done.code == 0, done.stderr
    return done.json()


def text_of(result: Any) -> Any:
    assert len(result.content) == 1
    return json.loads(result.content[0].text)


async def _session(client: Client) -> dict[str, Any]:
    """What a coding agent does: list the tools, search, ask, and get refused past the rate."""
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    seen: dict[str, Any] = {"tools": sorted(tools)}
    seen["ask_params"] = sorted(tools["ask_docs"].input_schema["properties"])
    seen["search_params"] = sorted(tools["search_docs"].input_schema["properties"])
    answered = await client.call_tool("ask_docs", {"question": QUESTION})
    seen["ask"] = (answered.is_error, text_of(answered))
    declined = await client.call_tool("ask_docs", {"question": "what is the weather in Lisbon"})
    seen["decline"] = (declined.is_error, text_of(declined))
    found = await client.call_tool("search_docs", {"question": QUESTION, "limit": 2})
    seen["search"] = (found.is_error, text_of(found))
    wordless = await client.call_tool("search_docs", {"question": "?!"})
    seen["wordless"] = (wordless.is_error, text_of(wordless))
    long = await client.call_tool("ask_docs", {"question": "keys " * 500})
    seen["long"] = (long.is_error, text_of(long))
    limited = await client.call_tool("search_docs", {"question": QUESTION})
    seen["limited"] = (limited.is_error, text_of(limited))
    return seen


def _check(seen: dict[str, Any], config: Path) -> None:
    assert seen["tools"] == ["ask_docs", "search_docs"]
    assert seen["ask_params"] == ["project", "question"]
    assert seen["search_params"] == ["limit", "project", "question"]
    assert seen["ask"] == (False, cli_json(config, "ask", QUESTION))
    assert seen["decline"][1]["outcome"] == "declined" and not seen["decline"][0]
    assert seen["search"] == (False, cli_json(config, "search", QUESTION, "--limit", "2"))
    assert seen["wordless"][0] and seen["wordless"][1]["error"]["code"] == "bad_question"
    assert seen["long"][0] and seen["long"][1]["error"]["code"] == "question_too_long"
    # 5 calls in the rate of 5 (refusals count too): the 6th is refused as the API refuses it
    assert seen["limited"][0] and seen["limited"][1]["error"]["code"] == "rate_limited"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    make_store(tmp_path).close()
    return write_serve_config(tmp_path, rate_limit="5/hour")


def test_stdio_tools_through_the_sdk_client(config: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "scout", "--config", str(config), "mcp"],
        env=dict(os.environ),
        cwd=str(config.parent),
    )

    async def main() -> dict[str, Any]:
        async with Client(params) as client:
            return await _session(client)

    _check(asyncio.run(main()), config)


def test_http_tools_through_the_sdk_client(config: Path) -> None:
    with running(config) as server:

        async def main() -> dict[str, Any]:
            async with Client(server.url + "/mcp") as client:
                return await _session(client)

        seen = asyncio.run(main())
        metrics = httpx2.get(server.url + "/metrics").text
    _check(seen, config)
    assert 'scout_questions_total{outcome="answered"} 1.0' in metrics
    assert 'scout_errors_total{code="rate_limited"} 1.0' in metrics


def test_http_tools_need_the_api_key_when_keys_are_set(tmp_path: Path) -> None:
    make_store(tmp_path).close()
    config = write_serve_config(tmp_path, api_keys_env="SCOUT_TEST_KEYS")
    with running(config, env={"SCOUT_TEST_KEYS": "k1"}) as server:

        async def ask(key: str) -> Any:
            headers = {"Authorization": f"Bearer {key}"}
            async with httpx2.AsyncClient(headers=headers) as http:
                transport = streamable_http_client(server.url + "/mcp", http_client=http)
                async with Client(transport) as client:
                    return text_of(await client.call_tool("ask_docs", {"question": QUESTION}))

        assert asyncio.run(ask("k1"))["outcome"] == "answered"
        refused = httpx2.post(server.url + "/mcp", json={"jsonrpc": "2.0"})
        assert refused.status_code == 401
        assert refused.json()["error"]["code"] == "unauthorized"


@pytest.mark.parametrize(
    ("retrieval", "said"),
    [
        ({}, "No answering model is called."),
        ({"expand": "model"}, "so a search costs a model call"),
    ],
)
def test_search_docs_says_whether_it_calls_a_model(
    tmp_path: Path, retrieval: dict[str, str], said: str
) -> None:
    from scout.config import load_config
    from scout.serve.mcp import search_description
    from scout.serve.service import Service

    config = write_serve_config(tmp_path)
    if retrieval:
        config.write_text(config.read_text() + '\n[retrieval]\nexpand = "model"\n')
    description = search_description(Service(load_config(config)))
    assert said in description
    assert "embedded" not in description  # no [retrieval.embeddings]
