"""GitLab's issue search (the ``search`` and ``in`` parameters of the issue listings).

What GitLab documents (doc/api/issues.md, "List group issues" / "List project issues"):
``search`` searches issues "against their title and description", ``in`` narrows it to
``title``, ``description`` or both. How it matches is in its source, and it is not a substring
of the whole phrase:

- Latin-script searches use PostgreSQL full-text search (app/finders/issuable_finder.rb
  ``use_full_text_search?``; app/models/concerns/pg_full_text_searchable.rb ``build_tsquery``):
  the search is split into terms (a double-quoted phrase is one term, lib/gitlab/sql/pattern.rb
  ``split_query_to_search_terms``), each term is a prefix match (``term:*``) on the words of the
  title and description as PostgreSQL's ``english`` configuration reads them (lower case,
  stemmed, stop words dropped), and the terms are joined with ``&``: every term must match,
  in any order, in the title or the description. A phrase's words must follow one another; a
  term of digits only matches everything (``(1:* | -1:*)``); a stop word matches nothing and
  is dropped from the query.
- Other searches fall back to ``fuzzy_search`` (lib/gitlab/sql/pattern.rb): every term must be
  a case-insensitive substring of the same column (``title ILIKE %t% AND ...`` OR
  ``description ILIKE %t% AND ...``).

The stemmer here is a small part of Snowball's English stemmer (plurals, -ed, -ing, -ly): enough
for "passwords" to meet "password" and "rotating" to meet "rotate"; the test estates need no
more.
"""

from __future__ import annotations

import re
import unicodedata

_QUOTED = re.compile(r'(?<![^ ])"[^"]+"(?![^ ])')
_WORD = re.compile(r"[^\W_]+")
_LATIN = re.compile(r"[\u0000-\u02FF\u1E00-\u1EFF\u2070-\u218F]*")
MAX_TEXT = 1_048_576  # GitLab keeps at most 1 MB of a column in the search vector
# PostgreSQL's english stop words (src/backend/snowball/stopwords/english.stop), in part.
STOP = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with you your yours yourself yourselves""".split()
)


def terms(search: str) -> list[str]:
    """The search's terms: double-quoted phrases whole, the rest split on white space."""
    quoted: list[str] = []

    def keep(match: re.Match[str]) -> str:
        quoted.append(match.group()[1:-1])
        return ""

    rest = _QUOTED.sub(keep, search)
    return rest.split() + quoted


def stem(word: str) -> str:
    """English endings set aside, as PostgreSQL's snowball stemmer does for the common ones."""
    for suffix, keep in (("sses", "ss"), ("ies", "i"), ("ss", "ss"), ("us", "us"), ("s", "")):
        if word.endswith(suffix) and len(word) > len(suffix) + 1:
            word = word[: -len(suffix)] + keep
            break
    for suffix in ("ingly", "edly", "ing", "ed", "ly"):
        base = word[: -len(suffix)]
        if word.endswith(suffix) and len(base) >= 3 and re.search("[aeiouy]", base):
            word = base
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def lexemes(text: str) -> list[str]:
    """A column as ``to_tsvector('english', ...)`` reads it: stems in order, stop words left out
    (PostgreSQL keeps their positions, so a phrase across a stop word differs; no test needs it)."""
    folded = unicodedata.normalize("NFKD", text[:MAX_TEXT]).casefold()
    return [stem(w) for w in _WORD.findall(folded) if w not in STOP]


def matches(search: str, title: str, description: str, columns: set[str]) -> bool:
    """Whether an issue is found by ``search`` in ``columns`` (``title``, ``description``)."""
    texts = [t for name, t in (("title", title), ("description", description)) if name in columns]
    if _LATIN.fullmatch(search):
        return _full_text(search, texts)
    return _fuzzy(search, texts)


def _full_text(search: str, texts: list[str]) -> bool:
    words = [lexemes(t) for t in texts]
    wanted = [t for t in terms(search) if not t.isdigit()]
    checks = []
    for term in wanted:
        parts = lexemes(term)
        if not parts:
            continue  # a stop word: PostgreSQL drops it from the query
        checks.append(parts)
    if not checks:
        return bool(terms(search))  # only digits (or only stop words): GitLab finds them all
    return all(any(_has(column, parts) for column in words) for parts in checks)


def _has(column: list[str], parts: list[str]) -> bool:
    if len(parts) == 1:
        return any(word.startswith(parts[0]) for word in column)
    # A phrase (``a <-> b``): its words one after the other, the last one exact as well.
    n = len(parts)
    return any(column[i : i + n] == parts for i in range(len(column) - n + 1))


def _fuzzy(search: str, texts: list[str]) -> bool:
    wanted = [t.casefold() for t in terms(search)]
    return bool(wanted) and any(all(w in t.casefold() for w in wanted) for t in texts)
