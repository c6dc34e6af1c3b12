"""haproxy in front of web processes on this machine, with the compose file's own configuration.

deploy/haproxy/haproxy.cfg finds the `web` replicas through Docker's DNS; here the replicas are
gunicorn processes on ports of 127.0.0.1, so `render` changes only where haproxy listens and
which servers it balances (the Docker resolvers section goes, every other line stays as
deployed: time-outs, retries, the health check, the balancing). The program is Debian's
(`make tools` installs it), run in the foreground as a Service.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import time
import urllib.request
from collections import Counter
from contextlib import suppress
from pathlib import Path

from benchhub.testing.processes import ROOT, Service, free_port

HAPROXY = "haproxy"
CONFIG = ROOT / "deploy" / "haproxy" / "haproxy.cfg"
BIND = re.compile(r"^(\s*)bind :8000$", re.MULTILINE)
SERVERS = re.compile(r"^(\s*)server-template web .*$", re.MULTILINE)
RESOLVERS = re.compile(r"^# Docker's embedded DNS.*?\n\n", re.MULTILINE | re.DOTALL)
# haproxy's httplog line names the backend and server that answered: "web/web1".
SERVED_BY = re.compile(r" web/(web\d+) ")


def render(config: str, *, port: int, backends: list[int]) -> str:
    """The deployed configuration listening on 127.0.0.1:`port`, balancing `backends` (ports of
    127.0.0.1) as web1, web2, ..."""
    for pattern in (BIND, SERVERS, RESOLVERS):
        if not pattern.search(config):
            raise ValueError(f"{CONFIG} no longer has {pattern.pattern!r}: adapt render()")
    config = RESOLVERS.sub("", config)
    config = BIND.sub(rf"\g<1>bind 127.0.0.1:{port}", config)
    servers = [f"server web{n} 127.0.0.1:{p} check" for n, p in enumerate(backends, start=1)]
    return SERVERS.sub(lambda m: "\n".join(m.group(1) + line for line in servers), config)


class HAProxy(Service):
    """haproxy balancing the web processes on `backends`; `url` is the site's address."""

    def __init__(self, *, backends: list[int]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.dir = Path(tempfile.mkdtemp(prefix="benchhub-haproxy-"))
        self.config = self.dir / "haproxy.cfg"
        self.config.write_text(render(CONFIG.read_text(), port=self.port, backends=backends))
        program = shutil.which(HAPROXY) or f"/usr/sbin/{HAPROXY}"
        # -db: stay in the foreground, logging to standard output (the Service's log file).
        super().__init__([program, "-db", "-f", str(self.config)], env={}, name="haproxy")

    def start(self) -> HAProxy:
        super().start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with suppress(OSError):
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=2):  # noqa: S310
                    return self
            if self.process is not None and self.process.poll() is not None:
                break
            time.sleep(0.2)
        raise RuntimeError(f"haproxy did not answer:\n{self.output()[-3000:]}")

    def served(self) -> Counter[str]:
        """Requests answered by each server (web1, web2, ...), from haproxy's access log."""
        return Counter(SERVED_BY.findall(self.output()))

    def stop(self) -> None:
        super().stop()
        shutil.rmtree(self.dir, ignore_errors=True)
