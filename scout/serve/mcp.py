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
from starlette.requests import Request

from scout.errors import Refused
from scout.serve.routes import address, bearer
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
    if not isinstance(request, Request):
        return STDIO_CLIENT
    return service.client(bearer(request), address(request, service))


def _text(document: Any, *, error: bool = False) -> CallToolResult:
    text = json.dumps(document, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=error)


async def _answer(
    service: Service, context: Context, call: Callable[[str], Awaitable[Any]]
) -> CallToolResult:
    # A refusal is returned, not raised: raised, the SDK would prefix its text and it would no
    # longer be the API's JSON error document.
    try:
        client = _client(service, context)
        service.admit(client)
        document = await call(client)
    except Refused as refused:
        return _text(service.refused(refused), error=True)
    return _text(document)


def search_description(service: Service) -> str:
    """What ``search_docs`` does, saying whether it calls a model (this server's settings)."""
    text = (
        "The passages retrieval finds for QUESTION, best first: the `scout search --json` list "
        "(rank, score, bm25, lexical_rank, dense_rank, project, path, heading, lines, sha, url, "
        "source, kind, expanded)."
    )
    settings = service.retrieval()
    if settings.expand:
        text += (
            " The answering model is asked for search terms first (the question alone is "
            "sent; a question asked before reuses its terms), so a search costs a model call."
        )
    else:
        text += " No answering model is called."
    if settings.embeddings is not None:
        text += " The question is also embedded to find passages by meaning."
    return text


def build_mcp(service: Service) -> MCPServer:
    """An MCP server whose two tools answer through ``service``."""
    server = MCPServer("scout", instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool(structured_output=False, description=search_description(service))
    async def search_docs(
        question: str, context: Context, limit: int = 8, project: list[str] | None = None
    ) -> CallToolResult:
        return await _answer(
            service, context, lambda client: service.search(question, limit, project, client=client)
        )

    @server.tool(structured_output=False)
    async def ask_docs(
        question: str, context: Context, project: list[str] | None = None
    ) -> CallToolResult:
        """Answer QUESTION from the documentation with checked citations, or decline with a
        reason: the `scout ask --json` document (outcome, answer, reason, citations, passages,
        cause, where_to_look: offline mode's passages to read, never an answer; expanded)."""
        return await _answer(
            service, context, lambda client: service.ask(question, project, client=client)
        )

    return server


def run_stdio(service: Service) -> None:
    """``scout mcp``: serve the tools on stdin/stdout until the client closes them."""
    build_mcp(service).run()
