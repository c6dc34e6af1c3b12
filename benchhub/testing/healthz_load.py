"""`/healthz` probed while readers read without pause: the load that both the healthz bench
(`bench/healthz.py`) and its slow test (`benchhub/tests/test_healthz_under_load.py`) put on a
running server, measured one way for both."""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass

import requests

PROBE_EVERY_S = 0.25


@dataclass(frozen=True)
class Read:
    url: str
    seconds: float
    status: int  # 0: no answer (a time-out, a dropped connection)


@dataclass(frozen=True)
class Load:
    """Each probe's seconds (inf for one that failed or did not answer 200) and each read."""

    probes_s: list[float]
    reads: list[Read]

    @property
    def statuses(self) -> set[int]:
        return {read.status for read in self.reads}

    def reads_s(self, *, containing: str = "") -> list[float]:
        return [read.seconds for read in self.reads if containing in read.url]


def healthz_under_readers(
    url: str, reads: list[str], *, readers: int, seconds: float, give_up_s: float = math.inf
) -> Load:
    """Start `readers` threads, each reading `reads` in turn (reader i from the i-th, over one
    kept-alive connection) without pause, and probe `url`/healthz every PROBE_EVERY_S for
    `seconds` over a new connection each time, as a balancer does. Stops early once a probe
    fails or takes over `give_up_s`: the bound is long broken, and the machine is shared."""
    stop = threading.Event()
    served: list[Read] = []

    def reader(index: int) -> None:
        with requests.Session() as session:
            n = index
            while not stop.is_set():
                target = reads[n % len(reads)]
                started = time.monotonic()
                try:
                    code = session.get(target, timeout=120).status_code
                except requests.RequestException:
                    code = 0  # a worker killed for its time-out: counted, not raised
                served.append(Read(url=target, seconds=time.monotonic() - started, status=code))
                n += 1

    threads = [threading.Thread(target=reader, args=(i,), daemon=True) for i in range(readers)]
    for thread in threads:
        thread.start()
    try:
        probes = _probe(url, seconds=seconds, give_up_s=give_up_s)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=120)
    return Load(probes_s=probes, reads=list(served))


def _probe(url: str, *, seconds: float, give_up_s: float) -> list[float]:
    probes: list[float] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        started = time.monotonic()
        try:
            healthy = requests.get(f"{url}/healthz", timeout=60).status_code == 200
        except requests.RequestException:
            healthy = False
        probes.append(time.monotonic() - started if healthy else math.inf)
        if probes[-1] > give_up_s:
            break
        time.sleep(PROBE_EVERY_S)
    return probes
