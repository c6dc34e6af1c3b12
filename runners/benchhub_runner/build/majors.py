"""What it takes to compile each PostgreSQL major with a modern gcc, applied by default.

One entry per major, 9.2 to 18. A build of a major outside the table takes the entry of the
nearest major below it (a 19devel snapshot builds like 18) and its provenance says so; before
9.2 there are no defaults.

``configure_flags`` keep the build free of optional libraries a benchmark host may lack
(readline and zlib are on by default in configure; ICU is required from 16 unless disabled;
``--without-icu`` exists from 10). ``copt`` goes to make as ``COPT``, which PostgreSQL's
Makefile.global appends to CFLAGS on every compile and link: unlike ``CFLAGS`` given to
configure, it never replaces configure's ``-O2``.

``verified`` says where an entry comes from: "built here" entries were compiled, installed,
started and benchmarked on this project's machine (Debian 12, gcc 12.2) by the tests or by hand;
the others come from knowledge of the releases and have not been compiled here (no 9.x source is
reachable from this machine). See docs/agent.md for the table in prose.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

BASE_FLAGS = ("--without-readline", "--without-zlib")
FLAGS_10_ON = (*BASE_FLAGS, "--without-icu")
# gcc 10 made -fno-common the default; releases from before the 2020 fixes define some globals
# in several files (ecpg among them) and fail to link without -fcommon. gcc 15 defaults to C23,
# where bool/true/false are keywords and 9.x's own "typedef char bool" no longer compiles; gnu99
# is the dialect 9.x was written against.
OLD_COPT = ("-fcommon", "-std=gnu99")
KNOWLEDGE = "from knowledge, not compiled here"
NO_DISTPREP = "release tarballs no longer carry gram.c and friends: bison, flex and perl needed"


@dataclass(frozen=True)
class MajorDefaults:
    major: str
    configure_flags: tuple[str, ...]
    copt: tuple[str, ...]
    # Where pgbench lives in the source; before 9.5 it is a contrib module, built with the rest.
    pgbench_dir: str
    verified: str
    notes: str = ""

    @property
    def contrib(self) -> tuple[str, ...]:
        """Contrib modules every build of this major gets (pgbench before 9.5)."""
        return ("pgbench",) if self.pgbench_dir == "contrib/pgbench" else ()


def _old(major: str, pgbench_dir: str, notes: str = "") -> MajorDefaults:
    return MajorDefaults(major, BASE_FLAGS, OLD_COPT, pgbench_dir, KNOWLEDGE, notes)


def _new(major: str, verified: str = KNOWLEDGE, notes: str = "") -> MajorDefaults:
    return MajorDefaults(major, FLAGS_10_ON, (), "src/bin/pgbench", verified, notes)


TABLE: dict[str, MajorDefaults] = {
    entry.major: entry
    for entry in (
        _old("9.2", "contrib/pgbench", "pgbench is contrib/pgbench: built and installed with it"),
        _old("9.3", "contrib/pgbench", "pgbench is contrib/pgbench: built and installed with it"),
        _old("9.4", "contrib/pgbench", "pgbench is contrib/pgbench: built and installed with it"),
        _old("9.5", "src/bin/pgbench", "pgbench moved to src/bin/pgbench"),
        _old("9.6", "src/bin/pgbench"),
        _new(
            "10",
            notes="minors released before the gcc 10 fixes (2020) may need CFLAGS -fcommon; "
            "with gcc 15 (C23), -std=gnu99 in cflags",
        ),
        _new("11", notes="as 10 for -fcommon on minors before mid-2020"),
        _new("12", notes="as 10 for -fcommon on minors before mid-2020"),
        _new(
            "13",
            verified="built here: 13.23 (Debian's orig tarball) with gcc 12.2, started, "
            "pgbench and pg_stat_statements run (by hand)",
        ),
        _new("14"),
        _new("15", verified="built here: 15.18 with gcc 12.2 (tests and by hand)"),
        _new("16", notes="--without-icu is required unless ICU's headers are installed"),
        _new(
            "17",
            verified="built here: 17.11 (Debian's orig tarball) with gcc 12.2, bison 3.8, "
            "flex 2.6, started, pgbench and pg_stat_statements run (by hand)",
            notes=NO_DISTPREP,
        ),
        _new("18", notes=NO_DISTPREP),
    )
}


def _major_key(major: str) -> tuple[int, int]:
    parts = [int(p) for p in major.split(".")]
    return (parts[0], parts[1] if len(parts) > 1 else 0)


def defaults_for(major: str) -> MajorDefaults | None:
    """The entry of ``major`` ("9.6", "15"), else of the nearest major below it, else None."""
    if major in TABLE:
        return TABLE[major]
    below = [m for m in TABLE if _major_key(m) < _major_key(major)]
    return TABLE[max(below, key=_major_key)] if below else None


def table_digest() -> str:
    """A digest of the whole table: part of every install key, so changing the table (a new
    workaround) makes new installs rather than reusing ones built without it."""
    # Only what changes a build: notes and verification remarks may be reworded freely.
    data = [(e.major, e.configure_flags, e.copt, e.pgbench_dir) for e in TABLE.values()]
    text = json.dumps(data)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
