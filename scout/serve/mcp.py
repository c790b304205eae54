"""The MCP tools ``search_docs`` and ``ask_docs`` (official ``mcp`` SDK), over stdio or HTTP.

Rule: a tool is the API route by another name. It passes the same checks (key over HTTP, the
rate per client, question size, answer slots) through the same :class:`Service` and returns the
same JSON document as text; a refusal is a tool error whose text is the API's error document.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent

from scout.errors import Refused
from scout.serve.service import STDIO_CLIENT, Service

INSTRUCTIONS = (
    "Scout answers questions about this estate from its documentation only. ask_docs returns an "
    "answer with numbered citations (permalinks pinned to a commit), or a decline with its "
    "reason: a decline means the documentation does not answer, so do not guess. In offline "
    "mode (no model) it lists where_to_look instead: passages to read, not an answer, and its "
    'declines with cause "offline" do not mean the documentation lacks the answer. search_docs '
    "lists the passages retrieval finds, best first, without composing an answer."
)


def _client(service: Service, context: Context) -> str:
    request = context.request_context.request
    if request is None:
        return STDIO_CLIENT
    headers = getattr(request, "headers", {})
    scheme, _, value = str(headers.get("authorization", "")).partition(" ")
    key = value.strip() if scheme.lower() == "bearer" else headers.get("x-scout-key")
    client = getattr(request, "client", None)
    return service.client(key or None, client.host if client else None)


def _text(document: Any, *, error: bool = False) -> CallToolResult:
    text = json.dumps(document, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=error)


async def _answer(
    service: Service, context: Context, call: Callable[[], Awaitable[Any]]
) -> CallToolResult:
    # A refusal is returned, not raised: raised, the SDK would prefix its text and it would no
    # longer be the API's JSON error document.
    try:
        service.admit(_client(service, context))
        document = await call()
    except Refused as refused:
        return _text(service.refused(refused), error=True)
    return _text(document)


def build_mcp(service: Service) -> MCPServer:
    """An MCP server whose two tools answer through ``service``."""
    server = MCPServer("scout", instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool(structured_output=False)
    async def search_docs(
        question: str, context: Context, limit: int = 8, project: list[str] | None = None
    ) -> CallToolResult:
        """The passages retrieval finds for QUESTION, best first: the `scout search --json` list
        (rank, score, project, path, heading, lines, sha, url, source). No model is called."""
        return await _answer(service, context, lambda: service.search(question, limit, project))

    @server.tool(structured_output=False)
    async def ask_docs(
        question: str, context: Context, project: list[str] | None = None
    ) -> CallToolResult:
        """Answer QUESTION from the documentation with checked citations, or decline with a
        reason: the `scout ask --json` document (outcome, answer, reason, citations, passages,
        cause, where_to_look: offline mode's passages to read, never an answer)."""
        return await _answer(service, context, lambda: service.ask(question, project))

    return server


def run_stdio(service: Service) -> None:
    """``scout mcp``: serve the tools on stdin/stdout until the client closes them."""
    build_mcp(service).run()
