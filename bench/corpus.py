"""Deterministic documentation-like text for the benchmarks: passages, pages and questions.

The main rule: the same seed gives the same text on every machine, and nothing is downloaded.
Words come from the demo estate's docs (real documentation vocabulary) widened with generated
technical words; body words follow a Zipf law over that vocabulary, with English stop words at
their usual share (about 40% of tokens). Each page has a topic (a handful of words it uses often),
so a question drawn from a passage has a right answer and realistic competition.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

DEMO_DOCS = Path(__file__).resolve().parent.parent / "scout" / "demo" / "estate"
VOCABULARY = 30_000
ZIPF_S = 1.07
# In running English the stop words hold the first ranks; content words start after them, so the
# commonest content word is in about a third of passages, as "use" or "config" would be in docs.
ZIPF_OFFSET = 40
STOP_SHARE = 0.4
STOP = (
    "the of and to a in is that for it as with be on by this are or from at an which can you "
    "if not when will your should have has it's do does how what its into all any more also "
    "than then there these them we our use may must only each other such one no so"
).split()
_SYLLABLES = (
    "ab ac ad al am an ar as at ba be bi bo ca ce ci co cu da de di do du el em en er es et "
    "fa fe fi fo ga ge gi go ha he hi in io is it ka ke ki ko la le li lo lu ma me mi mo mu "
    "na ne ni no nu ob od ol om on op or os pa pe pi po pu ra re ri ro ru sa se si so su ta "
    "te ti to tu ul um un ur us va ve vi vo xa xe yo za ze zo"
).split()
_WORD = re.compile(r"[a-z][a-z-]{2,20}")
_TEMPLATES = (
    "How do I {0} the {1} for {2}?",
    "What is the {0} {1} used for in {2}?",
    "Why does {0} {1} when the {2} is {3}?",
    "Where can I find the {0} for {1} {2}?",
    "How should we {0} {1} and {2} in the {3}?",
    "What happens to the {0} if {1} {2} fails?",
    "Is there a way to {0} {1} without the {2}?",
    "Which {0} does the {1} {2} need?",
    "Can you explain how {0} works with {1}?",
    "When is {0} {1} run and who owns the {2}?",
)


@dataclass(frozen=True)
class Passage:
    page: int
    heading: str
    body: str


class Vocabulary:
    """Content words ranked by frequency, with a Zipf sampler and a stop-word mixer."""

    def __init__(self, seed: int, size: int = VOCABULARY) -> None:
        rng = random.Random(seed)
        stop = set(STOP)
        demo: dict[str, int] = {}
        for path in sorted(DEMO_DOCS.rglob("*")):
            if path.suffix in (".md", ".rst"):
                for word in _WORD.findall(path.read_text(encoding="utf-8").lower()):
                    if word not in stop:
                        demo[word] = demo.get(word, 0) + 1
        real = sorted(demo, key=lambda w: (-demo[w], w))
        made: set[str] = set(real)
        generated: list[str] = []
        while len(real) + len(generated) < size:
            word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
            if rng.random() < 0.05:
                word += rng.choice(("-api", "-db", "-v2", "ctl", "d"))
            if word not in made:
                made.add(word)
                generated.append(word)
        # Real documentation words take the frequent ranks, generated ones the long tail.
        self.words = real + generated
        weights = [1.0 / ((rank + ZIPF_OFFSET) ** ZIPF_S) for rank in range(1, len(self.words) + 1)]
        self.cumulative = list(itertools.accumulate(weights))

    def draw(self, rng: random.Random, k: int) -> list[str]:
        return rng.choices(self.words, cum_weights=self.cumulative, k=k)

    def rank(self, rng: random.Random, low: int, high: int) -> str:
        return self.words[rng.randrange(low, min(high, len(self.words)))]


def _sentence_words(vocab: Vocabulary, rng: random.Random, topic: list[str], n: int) -> list[str]:
    out: list[str] = []
    content = vocab.draw(rng, n)
    for word in content:
        if rng.random() < 0.15:
            word = rng.choice(topic)
        out.append(word)
        while rng.random() < STOP_SHARE / (1 - STOP_SHARE) / 2:
            out.append(rng.choice(STOP))
    return out


def _prose(words: list[str], rng: random.Random) -> str:
    sentences: list[str] = []
    i = 0
    while i < len(words):
        size = rng.randint(8, 20)
        chunk = words[i : i + size]
        i += size
        sentences.append(chunk[0].capitalize() + " " + " ".join(chunk[1:]) + ".")
    return " ".join(sentences)


def passages(count: int, seed: int = 1, vocab: Vocabulary | None = None) -> Iterator[Passage]:
    """``count`` passages, pages of 3-12 sections each, 60-200 body words a section."""
    vocab = vocab or Vocabulary(seed)
    rng = random.Random(seed * 7919 + 1)
    made = 0
    page = 0
    while made < count:
        page += 1
        # Topic words come from the middle ranks: specific, but not one-offs.
        topic = [vocab.rank(rng, 200, 8000) for _ in range(6)]
        title = " ".join(rng.sample(topic, 2)).capitalize()
        for _ in range(rng.randint(3, 12)):
            if made >= count:
                return
            heading_words = rng.sample(topic, 1) + vocab.draw(rng, rng.randint(1, 3))
            heading = title + ": " + " ".join(heading_words)
            body = _prose(_sentence_words(vocab, rng, topic, rng.randint(40, 120)), rng)
            yield Passage(page, heading, body)
            made += 1


def question_for(passage: Passage, rng: random.Random) -> str:
    """A question a reader of ``passage`` might ask: its words, wrapped in everyday stop words."""
    stop = set(STOP)
    text = (passage.heading + " " + passage.body).lower()
    words = re.findall(r"[a-z][a-z0-9-]+", text)
    content = [w for w in dict.fromkeys(words) if w not in stop]
    template = rng.choice(_TEMPLATES)
    needed = template.count("{")
    picked = rng.sample(content, min(needed, len(content)))
    picked += ["it"] * (needed - len(picked))
    return template.format(*picked)


def questions(pool: list[Passage], count: int, seed: int = 1) -> list[str]:
    rng = random.Random(seed * 31 + 5)
    return [question_for(rng.choice(pool), rng) for _ in range(count)]


def markdown_page(title: str, sections: list[Passage]) -> str:
    """A Markdown page of the given sections, with a code block now and then."""
    out = [f"# {title}", ""]
    for n, section in enumerate(sections):
        out += [f"## {section.heading}", "", section.body, ""]
        if n % 3 == 2:
            out += ["```sh", f"scoutctl {section.heading.split()[0].lower()} --check", "```", ""]
    return "\n".join(out)
