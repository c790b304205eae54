"""``POST /api/graphql``: the subset of GitLab's GraphQL schema the sweep reads, on graphql-core.

Type, field and argument names, types and defaults follow GitLab's schema
(doc/api/graphql/reference/index.md: ``Query.group``, ``Query.project``, ``Group.issues``,
``Project.issue``, ``Issue``, ``Note``, ``PageInfo``, the ``Time`` scalar, ``IssueSort``), and
so do the limits and error shapes of doc/api/graphql/index.md ("Limits"):

- at most 100 nodes per connection page (``first`` above 100 is cut to 100, as GitLab's
  ``max_page_size`` does);
- query complexity: 250 for an authenticated request, scored like GitLab's
  ``Types::BaseField`` (each field 1; a connection ``first: n`` costs its selection times
  ``1 + n/100``), over the limit answers ``Query has complexity of N, which exceeds max
  complexity of 250``;
- 10,000 characters per query;
- errors come as ``{"errors": [{"message", "locations", "path", "extensions"}]}``, with
  graphql-ruby's messages and codes for unknown fields and arguments (``Field 'x' doesn't exist on
  type 'Issue'``, ``undefinedField``), HTTP 200; a query that times out answers 503 ``Request
  timed out. Please try a less complex query or a smaller set of records.``
  (app/controllers/graphql_controller.rb).

``Group.issues(includeArchived:)`` defaults to false (app/graphql/resolvers/concerns/
group_issuable_resolver.rb; older GitLab had ``nonArchived: true`` instead, which
``GraphQLFaults.unknown_argument`` plays).

Cursors are opaque strings (base64 of the last node's sort key), as GitLab's keyset cursors are.
Issues sort ``UPDATED_ASC`` by ``updated_at`` then id; ``updatedAfter`` is inclusive, like the
REST ``updated_after``. GraphQL-only faults (``GraphQLFaults``) sit beside the REST fault book,
which also applies to ``/api/graphql`` (429, 5xx, drops, slow answers, cut bodies).
"""

from __future__ import annotations

import base64
import json
import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from graphql import (
    FieldNode,
    GraphQLError,
    GraphQLSchema,
    OperationDefinitionNode,
    VariableNode,
    build_schema,
    execute,
    parse,
    validate,
)
from graphql.language import ast as gql_ast
from graphql.utilities import value_from_ast_untyped

from tests.gitlab_server import shapes
from tests.gitlab_server.estate import EstateData, ProjectInfo
from tests.gitlab_server.wire import Response

MAX_PAGE = 100
MAX_COMPLEXITY = 250  # authenticated; 200 anonymous, but every request here carries a token
MAX_QUERY_SIZE = 10_000
TIMED_OUT = "Request timed out. Please try a less complex query or a smaller set of records."

SDL = """
"Time represented in ISO 8601."
scalar Time
scalar NoteID

enum IssueSort {
  CREATED_ASC
  CREATED_DESC
  UPDATED_ASC
  UPDATED_DESC
}

enum IssueState {
  opened
  closed
  locked
  all
}

type PageInfo {
  endCursor: String
  hasNextPage: Boolean!
  hasPreviousPage: Boolean!
  startCursor: String
}

type Note {
  id: NoteID!
  body: String!
  system: Boolean!
  internal: Boolean
  createdAt: Time!
  updatedAt: Time!
}

type NoteConnection {
  count: Int!
  nodes: [Note]
  pageInfo: PageInfo!
}

type Issue {
  id: ID!
  iid: String!
  title: String!
  description: String
  state: IssueState!
  confidential: Boolean!
  webUrl: String!
  createdAt: Time!
  updatedAt: Time!
  userNotesCount: Int!
  reference(full: Boolean = false): String!
  notes(after: String, before: String, first: Int, last: Int): NoteConnection!
}

type IssueConnection {
  count: Int!
  nodes: [Issue]
  pageInfo: PageInfo!
}

type Group {
  id: ID!
  fullPath: ID!
  issues(
    includeSubgroups: Boolean = false
    includeArchived: Boolean = false
    updatedAfter: Time
    updatedBefore: Time
    state: IssueState
    confidential: Boolean
    sort: IssueSort = CREATED_DESC
    after: String
    before: String
    first: Int
    last: Int
  ): IssueConnection
}

type Project {
  id: ID!
  fullPath: ID!
  archived: Boolean
  issue(iid: String): Issue
}

type QueryComplexity {
  limit: Int
  score: Int
}

type Query {
  group(fullPath: ID!): Group
  project(fullPath: ID!): Project
  queryComplexity: QueryComplexity
}
"""

_SCHEMA: GraphQLSchema | None = None
_SCHEMA_LOCK = threading.Lock()


def schema() -> GraphQLSchema:
    global _SCHEMA
    with _SCHEMA_LOCK:
        if _SCHEMA is None:
            _SCHEMA = build_schema(SDL)
        return _SCHEMA


@dataclass
class GraphQLFaults:
    """Faults only GraphQL has; set them on ``GitLabServer.graphql``.

    ``time_out_above``: a query asking for more than this many issues a page answers GitLab's
    503 ``Request timed out`` (a big page is what makes GitLab's 30 s run out).
    ``partial_errors``: the next n answers carry an ``errors`` entry beside ``data`` (a notes
    field that failed reads as null, as GitLab answers when one resolver fails).
    ``unknown_argument``: the schema lacks ``Group.issues(includeArchived:)``, as an older GitLab.
    ``disabled``: no GraphQL endpoint at all (404), as a GitLab with the API turned off.
    """

    time_out_above: int | None = None
    partial_errors: int = 0
    unknown_argument: bool = False
    disabled: bool = False
    complexities: list[int] = field(default_factory=list)  # every accepted query's score
    lock: threading.Lock = field(default_factory=threading.Lock)


def _error(message: str, status: int = 200, **extra: Any) -> Response:
    return Response.json({"errors": [{"message": message, **extra}]}, status)


def answer(data: EstateData, body: bytes, faults: GraphQLFaults) -> Response:
    """The answer to one authenticated ``POST /api/graphql``."""
    if faults.disabled:
        return Response.json({"message": "404 Not Found"}, 404)
    try:
        request = json.loads(body or b"{}")
    except ValueError:
        return _error("Invalid JSON", 422)
    query = request.get("query") if isinstance(request, dict) else None
    variables = request.get("variables") or {} if isinstance(request, dict) else {}
    if not isinstance(query, str) or not query.strip():
        return _error("No query string was present", 422)
    if len(query) > MAX_QUERY_SIZE:
        return _error(f"Query too large: more than {MAX_QUERY_SIZE} characters", 200)
    try:
        document = parse(query)
    except GraphQLError as exc:
        return Response.json({"errors": [_ruby_error(exc)]})
    problems = validate(schema(), document)
    if faults.unknown_argument:
        problems += _no_include_archived(document)
    if problems:
        return Response.json({"errors": [_ruby_error(e) for e in problems]})
    score = complexity(document, variables)
    if score > MAX_COMPLEXITY:
        return _error(
            f"Query has complexity of {score}, which exceeds max complexity of {MAX_COMPLEXITY}"
        )
    if faults.time_out_above is not None and _largest_first(document, variables) > (
        faults.time_out_above
    ):
        return _error(TIMED_OUT, 503)
    with faults.lock:
        faults.complexities.append(score)
        partial = faults.partial_errors > 0
        if partial:
            faults.partial_errors -= 1
    result = execute(
        schema(),
        document,
        root_value=_Root(data, score),
        variable_values=variables,
        field_resolver=_resolve,
    )
    out: dict[str, Any] = {"data": result.data}
    if result.errors:
        out["errors"] = [_ruby_error(e) for e in result.errors]
    if partial:
        out["errors"] = out.get("errors", []) + [
            {
                "message": "Internal server error",
                "locations": [],
                "path": ["group", "issues", "nodes", 0, "notes"],
            }
        ]
    return Response.json(out)


def _ruby_error(error: GraphQLError) -> dict[str, Any]:
    """graphql-core's error in graphql-ruby's words, as GitLab sends them."""
    message = error.message
    extensions: dict[str, Any] = {}
    words = message.split("'")
    if message.startswith("Cannot query field") and len(words) >= 4:
        field_name, type_name = words[1], words[3]
        message = f"Field '{field_name}' doesn't exist on type '{type_name}'"
        extensions = {"code": "undefinedField", "typeName": type_name, "fieldName": field_name}
    elif message.startswith("Unknown argument") and len(words) >= 4:
        argument, where = words[1], words[3]
        owner, _, field_name = where.partition(".")
        message = f"Field '{field_name}' doesn't accept argument '{argument}'"
        extensions = {
            "code": "argumentNotAccepted",
            "name": field_name,
            "typeName": "Field",
            "argumentName": argument,
        }
    out: dict[str, Any] = {"message": message}
    if error.locations:
        out["locations"] = [{"line": loc.line, "column": loc.column} for loc in error.locations]
    if error.path:
        out["path"] = list(error.path)
    if extensions:
        out["extensions"] = extensions
    return out


def _no_include_archived(document: gql_ast.DocumentNode) -> list[GraphQLError]:
    found: list[GraphQLError] = []

    def walk(selections: Any) -> None:
        for node in selections or ():
            if isinstance(node, FieldNode):
                for argument in node.arguments or ():
                    if node.name.value == "issues" and argument.name.value == "includeArchived":
                        found.append(
                            GraphQLError(
                                "Unknown argument 'includeArchived' on field 'Group.issues'.",
                                [argument],
                            )
                        )
                if node.selection_set:
                    walk(node.selection_set.selections)

    for definition in document.definitions:
        if isinstance(definition, OperationDefinitionNode):
            walk(definition.selection_set.selections)
    return found


def _first(node: FieldNode, variables: dict[str, Any]) -> int | None:
    for argument in node.arguments or ():
        if argument.name.value == "first":
            if isinstance(argument.value, VariableNode):
                value = variables.get(argument.value.name.value)
            else:
                value = value_from_ast_untyped(argument.value)
            return None if value is None else min(int(value), MAX_PAGE)
    return None


def complexity(document: gql_ast.DocumentNode, variables: dict[str, Any]) -> int:
    """GitLab's score: 1 a field; a connection read ``first: n`` at a time costs ``1 + n/100``
    times its selection (app/graphql/types/base_field.rb, ``calculate_complexity``; GitLab
    multiplies resolver-backed connections only, this server every one: it errs strict)."""

    def score(selections: Any) -> float:
        total = 0.0
        for node in selections or ():
            if isinstance(node, FieldNode):
                cost = 1.0 + (score(node.selection_set.selections) if node.selection_set else 0)
                first = _first(node, variables)
                if first is not None:
                    cost *= 1.0 + first / 100.0
                total += cost
        return total

    return int(
        sum(
            score(d.selection_set.selections)
            for d in document.definitions
            if isinstance(d, OperationDefinitionNode)
        )
    )


def _largest_first(document: gql_ast.DocumentNode, variables: dict[str, Any]) -> int:
    largest = 0

    def walk(selections: Any) -> None:
        nonlocal largest
        for node in selections or ():
            if isinstance(node, FieldNode):
                if node.name.value == "issues":
                    largest = max(largest, _first(node, variables) or MAX_PAGE)
                if node.selection_set:
                    walk(node.selection_set.selections)

    for definition in document.definitions:
        if isinstance(definition, OperationDefinitionNode):
            walk(definition.selection_set.selections)
    return largest


# ------------------------------------------------------------------ resolvers


@dataclass
class _Root:
    data: EstateData
    score: int


@dataclass
class _Group:
    data: EstateData
    full_path: str
    id: int


@dataclass
class _Project:
    data: EstateData
    info: ProjectInfo


@dataclass
class _Issue:
    data: EstateData
    project: ProjectInfo
    record: dict[str, Any]
    row: dict[str, Any]  # the REST shape, built once: both APIs answer from the same values


def _cursor(key: Any) -> str:
    return base64.b64encode(json.dumps(key).encode()).decode()


def _after(cursor: str | None) -> Any:
    if not cursor:
        return None
    try:
        return json.loads(base64.b64decode(cursor.encode(), validate=True))
    except ValueError:
        raise GraphQLError("Please provide a valid cursor") from None


def _connection(
    rows: list[Any], keys: list[Any], args: dict[str, Any], descending: bool = False
) -> dict[str, Any]:
    """A forward page of ``rows`` (sorted by ``keys``) after the ``after`` cursor."""
    after = _after(args.get("after"))
    start = 0
    if after is not None:
        beyond = (lambda k: k < after) if descending else (lambda k: k > after)
        start = next((i for i, k in enumerate(keys) if beyond(k)), len(keys))
    first = args.get("first")
    size = MAX_PAGE if first is None else max(0, min(int(first), MAX_PAGE))
    chunk = rows[start : start + size]
    end = start + len(chunk)
    return {
        "count": len(rows),
        "nodes": chunk,
        "pageInfo": {
            "endCursor": _cursor(keys[end - 1]) if chunk else None,
            "startCursor": _cursor(keys[start]) if chunk else None,
            "hasNextPage": end < len(rows),
            "hasPreviousPage": start > 0,
        },
    }


def _time(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise GraphQLError(f"Time: {value!r} is not an ISO 8601 time") from None
    if moment.tzinfo is None:
        raise GraphQLError(f"Time: {value!r} has no time zone")
    return moment


def _group_issues(group: _Group, args: dict[str, Any]) -> dict[str, Any]:
    data = group.data
    subgroups = bool(args.get("includeSubgroups"))
    archived = bool(args.get("includeArchived"))
    after, before = _time(args.get("updatedAfter")), _time(args.get("updatedBefore"))
    state, confidential = args.get("state"), args.get("confidential")
    found: list[tuple[Any, _Issue]] = []
    for p in data.projects:
        inside = p.namespace == group.full_path or (
            subgroups and p.namespace.startswith(group.full_path + "/")
        )
        if not inside or (p.archived and not archived):
            continue
        for record in data.issues(p.path):
            row = shapes.issue(data, p, record)
            moment = datetime.fromisoformat(row["updated_at"])
            if after and moment < after or before and moment > before:
                continue
            if state not in (None, "all") and row["state"] != state:
                continue
            if confidential is not None and row["confidential"] != confidential:
                continue
            sort = args.get("sort") or "CREATED_DESC"
            stamp = row["updated_at"] if sort.startswith("UPDATED") else row["created_at"]
            found.append(((stamp, row["id"]), _Issue(data, p, record, row)))
    descending = (args.get("sort") or "CREATED_DESC").endswith("DESC")
    found.sort(key=lambda pair: pair[0], reverse=descending)
    return _connection([i for _, i in found], [list(k) for k, _ in found], args, descending)


def _issue_field(issue: _Issue, name: str, args: dict[str, Any]) -> Any:
    p, record, row = issue.project, issue.record, issue.row
    match name:
        case "id":
            return f"gid://gitlab/Issue/{row['id']}"
        case "iid":
            return str(row["iid"])
        case "title" | "description" | "state" | "confidential":
            return row[name]
        case "webUrl":
            return row["web_url"]
        case "createdAt":
            return row["created_at"]
        case "updatedAt":
            return row["updated_at"]
        case "userNotesCount":
            return row["user_notes_count"]
        case "reference":
            return f"{p.path}#{row['iid']}" if args.get("full") else f"#{row['iid']}"
        case "notes":
            notes = [
                shapes.note(issue.data, p, int(row["iid"]), n) for n in record.get("notes") or []
            ]
            # Notes come oldest first (GitLab's default order for an issuable's notes).
            notes.sort(key=lambda n: (n["created_at"], n["id"]))
            keys = [[n["created_at"], n["id"]] for n in notes]
            return _connection(notes, keys, args)
    return None


def _note_field(note: dict[str, Any], name: str) -> Any:
    match name:
        case "id":
            return f"gid://gitlab/Note/{note['id']}"
        case "body" | "system" | "internal":
            return note[name]
        case "createdAt":
            return note["created_at"]
        case "updatedAt":
            return note["updated_at"]
    return None


def _resolve(source: Any, info: Any, **args: Any) -> Any:
    name = info.field_name
    if isinstance(source, _Root):
        if name == "group":
            g = source.data.group(str(args["fullPath"]))
            return None if g is None else _Group(source.data, g.full_path, g.id)
        if name == "project":
            p = source.data.project(str(args["fullPath"]))
            return None if p is None else _Project(source.data, p)
        if name == "queryComplexity":
            return {"limit": MAX_COMPLEXITY, "score": source.score}
    if isinstance(source, _Group):
        if name == "issues":
            return _group_issues(source, args)
        return {"id": f"gid://gitlab/Group/{source.id}", "fullPath": source.full_path}.get(name)
    if isinstance(source, _Project):
        if name == "issue":
            for record in source.data.issues(source.info.path):
                if str(record.get("iid")) == str(args.get("iid")):
                    row = shapes.issue(source.data, source.info, record)
                    return _Issue(source.data, source.info, record, row)
            return None
        return {
            "id": f"gid://gitlab/Project/{source.info.id}",
            "fullPath": source.info.path,
            "archived": source.info.archived,
        }.get(name)
    if isinstance(source, _Issue):
        return _issue_field(source, name, args)
    if isinstance(source, dict):
        if "noteable_iid" in source:
            return _note_field(source, name)
        return source.get(name)
    return None
