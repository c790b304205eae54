"""Every command of the ``scout`` group, in help order."""

from scout.cli.ask import ask
from scout.cli.gaps import gaps
from scout.cli.index import index

ALL = [index, ask, gaps]
