"""The host's compiler and ccache as builds drive them, and the source generators a tree
without its generated files needs."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .settings import BuildSettings


@dataclass(frozen=True)
class Toolchain:
    """The compiler and how it is driven; ``version`` is part of every install key."""

    cc: str
    version: str
    ccache: str | None
    ccache_dir: Path | None
    jobs: int

    @property
    def cc_command(self) -> str:
        return f"{self.ccache} {self.cc}" if self.ccache else self.cc

    def env(self, *, base: Path) -> dict[str, str]:
        if not self.ccache or self.ccache_dir is None:
            return {}
        # Paths under BASEDIR hash as relative ones, and NOHASHDIR leaves the compile directory
        # out: every kept tree and a second agent's cache share hits.
        return {
            "CCACHE_DIR": str(self.ccache_dir),
            "CCACHE_BASEDIR": str(base),
            "CCACHE_NOHASHDIR": "1",
        }


def toolchain_for(settings: BuildSettings, *, builds_root: Path) -> Toolchain:
    """The host's compiler (its ``--version`` first line) and ccache per the settings.
    ValueError when the compiler is missing, or ccache is "on" and missing."""
    cc = shutil.which(settings.cc)
    if cc is None:
        raise ValueError(f"no C compiler {settings.cc!r} on PATH")
    # The host's own compiler, not code from a source: safe to run as the agent.
    done = subprocess.run([cc, "--version"], capture_output=True, text=True, check=False)
    version = (done.stdout.splitlines() or ["unknown"])[0].strip()
    ccache = shutil.which("ccache") if settings.ccache != "off" else None
    if settings.ccache == "on" and ccache is None:
        raise ValueError("ccache = on, but there is no ccache on PATH")
    ccache_dir = (settings.ccache_dir or builds_root / "ccache") if ccache else None
    return Toolchain(settings.cc, version, ccache, ccache_dir, settings.make_jobs)


GENERATORS = ("bison", "flex", "perl")


def generators_missing(src: Path) -> list[str]:
    """The tools a tree without its generated files (gram.c, scan.c, ...) needs and this host's
    PATH lacks. Release tarballs up to 16 ship those files; 17 dropped them, and git never had
    them."""
    if (src / "src" / "backend" / "parser" / "gram.c").exists():
        return []
    return [tool for tool in GENERATORS if shutil.which(tool) is None]
