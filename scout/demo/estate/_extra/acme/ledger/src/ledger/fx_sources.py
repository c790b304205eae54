"""Where conversion rates come from: the central bank's daily reference feed."""

from __future__ import annotations

from decimal import Decimal
from xml.etree import ElementTree

FEED_URL = "https://rates.central-bank.example/daily.xml"


def parse_feed(document: bytes) -> dict[str, Decimal]:
    """Rates against the euro from the daily reference feed, keyed by ISO 4217 code."""
    root = ElementTree.fromstring(document)
    return {
        cube.attrib["currency"]: Decimal(cube.attrib["rate"])
        for cube in root.iter("Cube")
        if "currency" in cube.attrib
    }
