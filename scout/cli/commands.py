"""Every command of the ``scout`` group, in help order."""

from scout.cli.ask import ask
from scout.cli.demo import demo
from scout.cli.evaluate import evaluate
from scout.cli.gaps import gaps
from scout.cli.index import index
from scout.cli.ingest import sweep, worker
from scout.cli.report import report
from scout.cli.search import search
from scout.cli.signposts import signposts

ALL = [index, ask, search, sweep, worker, signposts, gaps, report, evaluate, demo]
