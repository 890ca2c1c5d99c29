"""A loopback load balancer for the benchmarks: nginx, round robin over HTTP upstreams.

``balancer(["127.0.0.1:8001", "127.0.0.1:8002"])`` starts Debian's nginx (``apt-get install
nginx``) on a free loopback port with a configuration written to a temporary folder, yields its
base URL (``http://127.0.0.1:PORT``) and the master's pid, and stops it. Responses are passed on
unbuffered (MCP answers as server-sent events), upstream connections are kept alive, and each
request goes to the next upstream in turn.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from tests.fakes.processes import stop_process

__all__ = ["balancer"]

_CONFIG = """\
worker_processes 1;
error_log {folder}/error.log warn;
pid {folder}/nginx.pid;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {folder}/body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
    upstream instances {{
{servers}
        keepalive 512;
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://instances;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_buffering off;
            proxy_request_buffering off;
            proxy_read_timeout 600s;
        }}
    }}
}}
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def balancer(upstreams: list[str]) -> Iterator[tuple[str, int]]:
    """Run nginx in front of ``upstreams`` (``HOST:PORT`` each); yields its URL and pid."""
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(nginx).exists():
        raise SystemExit("the load balancer is nginx: apt-get install nginx")
    with tempfile.TemporaryDirectory(prefix="bench-lb-") as tmp:
        folder = Path(tmp)
        os.chmod(folder, 0o777)  # nginx's workers run as nobody under root
        port = _free_port()
        servers = "\n".join(f"        server {u};" for u in upstreams)
        config = folder / "nginx.conf"
        config.write_text(_CONFIG.format(folder=folder, servers=servers, port=port))
        process = subprocess.Popen(
            [nginx, "-p", str(folder), "-c", str(config), "-g", "daemon off;"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 10
            while True:
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                    break
                if process.poll() is not None or time.monotonic() > deadline:
                    error = process.stderr.read() if process.stderr else ""
                    raise SystemExit(f"nginx did not start: {error}")
                time.sleep(0.05)
            yield f"http://127.0.0.1:{port}", process.pid
        finally:
            stop_process(process)
