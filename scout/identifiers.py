"""The words of identifiers written in camelCase or PascalCase, indexed beside a passage's text.

FTS5's tokeniser keeps ``openBrowser`` as one token, ``openbrowser``, so a question that says
"stop it opening a browser tab" cannot match the option that does it, nor "redirection error"
the ``RedirectionError`` it is about. Docs name options, classes and functions this way in
every generator (Stencil's config keys, Hugo's ``GetRemote``, python-gitlab's exceptions), and
users write the words apart. So a passage is also indexed under its identifiers' words
(``open browser``, ``redirection error``); what it shows and cites is unchanged.

Names are written in PascalCase too (GitLab, JavaScript, MkDocs), and split they would put
``git`` and ``java`` into every passage that names them. A name recurs across a project's pages
where a class is the subject of a few: a PascalCase token in more than ``COMMON_SHARE`` of a
batch's passages (one project as indexed, one signposted file) is taken for a name and left
whole. A lowerCamel one (``componentWillLoad``, ``outputTargets``) is an identifier however
often its docs use it. Measured on realdocs-dev (bench/realdocs_recall.py): without that rule
``git`` came to match 1,742 more passages, with it 61.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

# A token (a run of ASCII letters and digits, from its start) with a lower letter before an upper
# one ("openBrowser") or an acronym before a word ("XMLHttp"). The look-ahead scans one token at
# most and only from a token's start, and the run is possessive: a text is scanned in linear
# time. A token longer than a name is anything but one (a hash, a base64 run) and is skipped.
_IDENTIFIER = re.compile(
    r"(?<![A-Za-z0-9])(?=[A-Za-z0-9]*?(?:[a-z][A-Z]|[A-Z][A-Z][a-z]))[A-Za-z0-9]++"
)
MAX_IDENTIFIER_CHARS = 64
# An acronym's plural is one part ("APIs", "URLs"), not "AP" and "Is".
_PART = re.compile(r"[A-Z]{2,}s(?![a-z])|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
COMMON_SHARE = 0.01
COMMON_MIN_PASSAGES = 5  # below this many passages nothing in a batch counts as common


def identifiers(text: str) -> set[str]:
    """The camelCase and PascalCase tokens of ``text``."""
    return {token for token in _IDENTIFIER.findall(text) if len(token) <= MAX_IDENTIFIER_CHARS}


def batch_words(texts: Iterable[str]) -> list[str]:
    """:func:`identifier_words` of each of ``texts``, one batch (one text a passage), leaving
    out the PascalCase tokens of more than ``COMMON_SHARE`` of them: names."""
    found = [identifiers(text) for text in texts]
    seen = Counter(token for tokens in found for token in tokens)
    most = max(COMMON_MIN_PASSAGES, COMMON_SHARE * len(found))
    names = {token for token, n in seen.items() if n > most and token[0].isupper()}
    return [identifier_words(tokens - names) for tokens in found]


def identifier_words(tokens: set[str]) -> str:
    """The words of identifier ``tokens``, one identifier's words together ("open browser;
    redirection error"), in a stable order."""
    phrases = []
    for token in sorted(tokens):
        parts = _PART.findall(token)
        if len(parts) > 1:
            phrases.append(" ".join(parts))
    return "; ".join(dict.fromkeys(phrases))
