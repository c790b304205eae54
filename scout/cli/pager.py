"""Long lists through a pager, as gh and git do: only when standard output is a terminal and the
text is taller than it; ``SCOUT_PAGER``, else ``PAGER``, else ``less`` (with ``LESS=FRX`` unless
``LESS`` is set: quit if one screen, keep colours, leave the text on screen). An empty value or
``cat`` means no pager; a pager that cannot start means the text is printed as it is.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading

DEFAULT = "less"
NONE = ("", "cat")


def command() -> list[str] | None:
    """The pager to run, split as a shell would; None for none."""
    chosen = os.environ.get("SCOUT_PAGER")
    if chosen is None:
        chosen = os.environ.get("PAGER", DEFAULT)
    try:
        words = shlex.split(chosen)
    except ValueError:
        return None
    if not words or chosen.strip() in NONE:
        return None
    return words


def page(text: str) -> bool:
    """Show ``text`` through the pager when that is wanted; False when the caller should print."""
    if not sys.stdout.isatty():
        return False
    if text.count("\n") < shutil.get_terminal_size((80, 24)).lines:
        return False
    words = command()
    if words is None:
        return False
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    sys.stdout.flush()
    try:
        child = subprocess.Popen(words, stdin=subprocess.PIPE, env=env)
    except OSError:
        return False
    assert child.stdin is not None
    # Ctrl-C in less is for less (it stops a search); as git does, Scout waits for it to quit
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        child.stdin.write(text.encode("utf-8", "replace"))
        child.stdin.close()
    except BrokenPipeError:
        pass  # the reader quit before the end: what they did not read is not an error
    finally:
        child.wait()
        if main:
            signal.signal(signal.SIGINT, previous)
    return True
