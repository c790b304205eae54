"""Seeing text as a reader does: invisible characters gone, compatibility forms folded, look-alike
letters read as the Latin ones they imitate. Pure.

Fence delimiters and citation markers are matched on this view, not on the raw code points: a
model (and a person) reads ``ЕND`` with a Cyrillic Е, ``END\u200bPASSAGE`` with a zero-width
space, or ``【1】`` exactly as the real thing, so the checks must too. The look-alike table is a
hand-kept subset of Unicode's confusables (UTS #39, ``confusables.txt``) for the Latin letters,
digits and brackets; NFKC already folds fullwidth, mathematical, circled and superscript forms.
"""

from __future__ import annotations

import re
import unicodedata

# Unicode's Default_Ignorable_Code_Point property (DerivedCoreProperties.txt): rendered as
# nothing, so they can sit inside a word unseen. Bidi controls and tag characters are in it.
IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)

# Look-alike -> Latin (TR39 confusables, the Latin-letter, digit and bracket targets).
CONFUSABLES: dict[str, str] = {
    # Cyrillic
    "А": "A", "В": "B", "С": "C", "Е": "E", "Н": "H", "І": "I", "Ј": "J", "К": "K", "М": "M",
    "О": "O", "Р": "P", "Ѕ": "S", "Т": "T", "Х": "X", "Ү": "Y", "Ԁ": "d", "Ԍ": "G", "Ԛ": "Q",
    "Ԝ": "W", "а": "a", "с": "c", "е": "e", "һ": "h", "і": "i", "ј": "j", "о": "o", "р": "p",
    "ѕ": "s", "х": "x", "у": "y", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ɡ": "g", "Ӏ": "I", "ӏ": "l",
    "Ꙅ": "S", "ꙅ": "s", "Ɡ": "G", "ԍ": "g",
    # Greek
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "ο": "o", "ν": "v", "ι": "i", "α": "a",
    "ϲ": "c", "Ϲ": "C", "ϳ": "j", "Ϳ": "J", "ѵ": "v", "Ѵ": "V",
    # Armenian
    "Օ": "O", "օ": "o", "Ս": "U", "ս": "u", "Տ": "S", "Ց": "G", "ց": "g", "ք": "p", "հ": "h",
    "ո": "n", "ա": "w", "զ": "q",
    # Cherokee (capitals that are Latin look-alikes)
    "Ꭺ": "A", "Ᏼ": "B", "Ꮯ": "C", "Ꭰ": "D", "Ꭼ": "E", "Ꮐ": "G", "Ꮋ": "H", "Ꭻ": "J",
    "Ꮶ": "K", "Ꮮ": "L", "Ꮇ": "M", "Ꮲ": "P", "Ꭱ": "R", "Ꮪ": "S", "Ꭲ": "T", "Ꮩ": "V",
    "Ꮃ": "W", "Ꮓ": "Z",
    # Latin small capitals and IPA letters
    "ᴀ": "A", "ʙ": "B", "ᴄ": "C", "ᴅ": "D", "ᴇ": "E", "ɢ": "G", "ʜ": "H", "ɪ": "I", "ᴊ": "J",
    "ᴋ": "K", "ʟ": "L", "ᴍ": "M", "ɴ": "N", "ᴏ": "O", "ᴘ": "P", "ʀ": "R", "ꜱ": "S", "ᴛ": "T",
    "ᴜ": "U", "ᴠ": "V", "ᴡ": "W", "ʏ": "Y", "ᴢ": "Z", "ı": "i", "ȷ": "j", "ɑ": "a", "ǀ": "l",
    # Brackets that read as square brackets
    "【": "[", "】": "]", "〔": "[", "〕": "]", "〖": "[", "〗": "]", "〘": "[", "〙": "]",
    "〚": "[", "〛": "]", "⟦": "[", "⟧": "]", "⁅": "[", "⁆": "]", "❲": "[", "❳": "]",
    "⦋": "[", "⦌": "]", "⦍": "[", "⦎": "]", "⦏": "[", "⦐": "]", "⟬": "[", "⟭": "]",
    "⸢": "[", "⸣": "]", "⸤": "[", "⸥": "]", "［": "[", "］": "]",
}  # fmt: skip
_TABLE = str.maketrans(CONFUSABLES)


def visible(text: str) -> str:
    """Invisible characters dropped, then NFKC: the code points a reader actually sees."""
    return unicodedata.normalize("NFKC", IGNORABLE.sub("", text))


def fold(text: str) -> str:
    """:func:`visible`, then look-alike letters and brackets mapped to the Latin ones.

    Mapping is per code point and never changes the length of a :func:`visible` text, so an
    index into the fold is an index into the visible text.
    """
    return visible(text).translate(_TABLE)


def fold_char(char: str) -> str:
    """One code point of a visible text as its Latin look-alike (itself when it has none)."""
    return CONFUSABLES.get(char, char)


_BRACKETS = str.maketrans({k: v for k, v in CONFUSABLES.items() if v in "[]"})


def prose(text: str) -> str:
    """Model prose as it reads: :func:`visible`, with look-alike square brackets made square.

    Letters are left alone (an answer in Greek stays Greek); only what a citation marker is
    made of, brackets and digits (NFKC folds fullwidth and superscript digits), is folded.
    """
    return visible(text).translate(_BRACKETS)


# A square bracket (or a look-alike, once folded) pair with no bracket inside: where a reader,
# and the citation check, may find a marker such as `[2]`, `[^2]` or `[1, 3]`. Each match
# attempt scans only to the next bracket, so a pass is linear in the text.
_BRACKET_PAIR = re.compile(r"\[([^\[\]]*)\]")
_ALL_BRACKETS = str.maketrans({"[": "(", "]": ")"})
MAX_MARKER_PASSES = 8  # deeper nesting than this and every bracket in the text is made round


def disarm_markers(text: str) -> str:
    """Text in which no bracket holds a digit: each such pair (`[2]`, `[^2]`, `【2】`) becomes
    round (`(2)`), so text quoted from a passage cannot name a passage as a citation.

    `text` is a :func:`visible` text. Rounding an inner pair can leave an outer one holding a
    digit (`[[2]]`), so passes repeat; past MAX_MARKER_PASSES every bracket is made round.
    """
    for _ in range(MAX_MARKER_PASSES):
        folded = text.translate(_BRACKETS)  # one code point for one: indexes carry over
        pieces, last = [], 0
        for match in _BRACKET_PAIR.finditer(folded):
            if any(char.isdigit() for char in match.group(1)):
                pieces += [
                    text[last : match.start()],
                    "(",
                    text[match.start() + 1 : match.end() - 1],
                    ")",
                ]
                last = match.end()
        if not pieces:
            return text
        text = "".join(pieces) + text[last:]
    return text.translate(_BRACKETS).translate(_ALL_BRACKETS)
