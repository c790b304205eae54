"""``scout serve`` on an address it cannot listen on: one ``scout:`` line, exit 3 (README, "Exit
codes"), before uvicorn starts, instead of uvicorn's own error after "Application startup
complete" and exit 1."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.fakes.corpus import make_store
from tests.fakes.serving import write_serve_config
from tests.helpers.run import run_cli


def test_a_port_in_use_is_one_line_and_exit_3(tmp_path: Path) -> None:
    make_store(tmp_path).close()
    config = write_serve_config(tmp_path)
    with socket.create_server(("127.0.0.1", 0)) as holder:
        port = holder.getsockname()[1]
        done = run_cli(["--config", str(config), "serve", "--port", str(port)], timeout=60)
    assert (done.code, done.stdout) == (3, "")
    assert done.stderr == (
        f"scout: cannot listen on 127.0.0.1:{port}: address already in use; another process "
        "listens there (another scout serve?): stop it, or pass --host/--port or set [serve] "
        "host and port\n"
    )


@pytest.mark.parametrize("host", ["nosuchhost.invalid", "192.0.2.1"])
def test_an_address_this_machine_cannot_listen_on_is_exit_3(tmp_path: Path, host: str) -> None:
    make_store(tmp_path).close()
    # open: a server on an address other than loopback needs keys, or says it is meant to be open
    config = write_serve_config(tmp_path, open=True)
    done = run_cli(["--config", str(config), "serve", "--host", host, "--port", "0"], timeout=60)
    assert (done.code, done.stdout) == (3, "")
    assert done.stderr.startswith(f"scout: cannot listen on {host}:0: ")
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
