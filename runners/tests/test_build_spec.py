"""Build specs: what alice may ask a host to build, and the errors that name the field."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import subprocess
import sys
from typing import Any

import pytest
from conftest import RUNNERS

from benchhub_runner.build import SpecError, spec_from_json, spec_parse
from benchhub_runner.build.majors import TABLE, defaults_for, table_digest
from benchhub_runner.build.spec import GitSource, ReleaseSource, TarballSource

SHA = "11df0df97fe3ea4ba9a791faaf39cee1d2fe571e78885b5b55d8517d27c323b4"
PATCH = "--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n-a\n+b\n"


def patch(name: str = "slow-commit.patch", text: str = PATCH) -> dict[str, str]:
    return {"name": name, "sha256": hashlib.sha256(text.encode()).hexdigest(), "text": text}


def spec(**fields: Any) -> dict[str, Any]:
    return {"name": "15.18", "source": {"kind": "release", "version": "15.18"}, **fields}


def error(data: Any) -> SpecError:
    with pytest.raises(SpecError) as caught:
        spec_parse(data)
    return caught.value


def test_it_parses_every_kind_of_source() -> None:
    assert spec_parse(spec()).source == ReleaseSource(version="15.18")
    tarball = spec_parse(spec(source={"kind": "tarball", "url": "https://x.org/pg.tgz",
                                      "sha256": SHA.upper()}))  # fmt: skip
    assert tarball.source == TarballSource(sha256=SHA, url="https://x.org/pg.tgz")
    local = spec_parse(spec(source={"kind": "tarball", "path": "/srv/pg.tar.bz2", "sha256": SHA}))
    assert local.source == TarballSource(sha256=SHA, path="/srv/pg.tar.bz2")
    commit = spec_parse(spec(source={"kind": "git", "url": "https://git.example/pg.git",
                                     "ref": "1a2b3c4"}))  # fmt: skip
    assert commit.source == GitSource(url="https://git.example/pg.git", ref="1a2b3c4")
    snapshot = spec_parse(spec(source={"kind": "git", "url": "/srv/pg.git", "branch": "master",
                                       "date": "2021-05-01"}))  # fmt: skip
    assert snapshot.source == GitSource(url="/srv/pg.git", branch="master",
                                        date=dt.date(2021, 5, 1))  # fmt: skip


@pytest.mark.parametrize("name", ["15.18", "14beta1", "9.6.24", "9.2.24", "14rc1", "9.6beta1",
                                  "10.0", "18.1"])  # fmt: skip
def test_it_accepts_release_names_as_the_project_writes_them(name: str) -> None:
    assert spec_parse(spec(source={"kind": "release", "version": name})).source.version == name


@pytest.mark.parametrize("name", ["15", "9.6", "15.18.1", "14beta", "v15.18", "15.18/../x", ""])
def test_it_refuses_what_is_not_a_release_name(name: str) -> None:
    assert error(spec(source={"kind": "release", "version": name})).field == "source.version"


def test_it_round_trips_through_json() -> None:
    original = spec(
        patches=[patch()],
        configure_flags=["--enable-debug"],
        cflags="-O2 -g",
        contrib=["pg_stat_statements", "pg_prewarm", "pg_prewarm"],
        source={"kind": "git", "url": "/srv/pg.git", "branch": "master", "date": "2021-05-01"},
    )
    parsed = spec_from_json(json.dumps(original))
    assert parsed.contrib == ("pg_prewarm", "pg_stat_statements")  # sorted, once each
    assert spec_parse(parsed.as_dict()) == parsed


@pytest.mark.parametrize(
    ("data", "field", "words"),
    [
        ({"source": {"kind": "release", "version": "15.18"}}, "name", "required"),
        (spec(source={"kind": "svn"}), "source.kind", "one of"),
        (spec(source={"kind": "tarball", "url": "https://x/p.tgz", "sha256": "abc"}),
         "source.sha256", "64 hexadecimal"),
        (spec(source={"kind": "tarball", "url": "ftp://x/p.tgz", "sha256": SHA}),
         "source.url", "https"),
        (spec(source={"kind": "tarball", "url": "http://10.0.0.1/p.tgz", "sha256": SHA}),
         "source.url", "https"),
        (spec(source={"kind": "tarball", "path": "relative.tgz", "sha256": SHA}),
         "source.path", "absolute"),
        (spec(source={"kind": "tarball", "sha256": SHA}), "source.url", "exactly one"),
        (spec(source={"kind": "git", "url": "/r", "ref": "--upload-pack=touch /tmp/x"}),
         "source.ref", "commit, tag or branch"),
        (spec(source={"kind": "git", "url": "ext::sh -c id", "ref": "master"}),
         "source.url", "https"),
        (spec(source={"kind": "git", "url": "/r", "ref": "a", "date": "2021-05-01"}),
         "source.ref", "not both"),
        (spec(source={"kind": "git", "url": "/r", "branch": "master", "date": "2021-02-30"}),
         "source.date", "calendar"),
        (spec(source={"kind": "git", "url": "/r"}), "source.ref", "branch and a date"),
        (spec(patches=[{**patch(), "sha256": "0" * 64}]), "patches[0].sha256", "does not match"),
        (spec(patches=[patch(), patch()]), "patches", "unique"),
        (spec(patches=[patch(name="../evil")]), "patches[0].name", "file-like"),
        (spec(configure_flags=["--enable-debug", "--prefix=/usr"]), "configure_flags[1]",
         "install locations"),
        (spec(configure_flags=["--bindir=/tmp"]), "configure_flags[0]", "install locations"),
        (spec(configure_flags=["CC=evil"]), "configure_flags[0]", "switch"),
        (spec(configure_flags=["--with-x\n--prefix=/"]), "configure_flags[0]", "switch"),
        (spec(configure_flags=["--enable-debug\n"]), "configure_flags[0]", "switch"),
        (spec(source={"kind": "git", "url": "/r", "ref": "master\n"}), "source.ref", "commit"),
        (spec(contrib=["pg_prewarm\n"]), "contrib[0]", "contrib module"),
        (spec(source={"kind": "release", "version": "15.18\n"}), "source.version", "release"),
        (spec(cflags="-O2\n-g"), "cflags", "one line"),
        (spec(contrib=["pg_stat_statements", "../src"]), "contrib[1]", "contrib module"),
        (spec(major_defaults="yes"), "major_defaults", "true or false"),
        (spec(colour="blue"), "colour", "unknown field"),
        ([], "(document)", "JSON object"),
    ],
)  # fmt: skip
def test_it_names_the_field_that_is_wrong(data: Any, field: str, words: str) -> None:
    caught = error(data)
    assert caught.field == field
    assert words in caught.message


def test_it_bounds_what_a_spec_may_carry() -> None:
    assert error(spec(name="x" * 101)).field == "name"
    assert error(spec(configure_flags=["--enable-debug"] * 51)).field == "configure_flags"
    big = "+" * (10 * 1024 * 1024 + 1)
    assert error(spec(patches=[patch(text=big)])).field == "patches[0].text"


def test_it_reports_json_that_does_not_parse() -> None:
    with pytest.raises(SpecError, match="not JSON"):
        spec_from_json("{")


# --- per-major defaults ----------------------------------------------------------------------


def test_it_has_defaults_for_every_major_from_92_to_18() -> None:
    expected = ["9.2", "9.3", "9.4", "9.5", "9.6", *map(str, range(10, 19))]
    assert list(TABLE) == expected
    assert defaults_for("9.4").contrib == ("pgbench",)
    assert defaults_for("9.5").pgbench_dir == "src/bin/pgbench"
    assert "-fcommon" in defaults_for("9.6").copt
    assert "--without-icu" not in defaults_for("9.6").configure_flags  # no such option before 10
    assert "--without-icu" in defaults_for("16").configure_flags  # 16 requires ICU otherwise
    assert "built here" in defaults_for("15").verified


def test_it_builds_unknown_majors_like_the_nearest_one_below() -> None:
    assert defaults_for("19").major == "18"
    assert defaults_for("9.1") is None
    assert len(table_digest()) == 16


def test_it_names_the_bad_field_from_the_command_line(tmp_path) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec(source={"kind": "tarball", "path": "/x.tgz", "sha256": "1"})))
    done = subprocess.run(
        [sys.executable, "-m", "benchhub_runner.cli", "build", str(path), "--cache-dir",
         str(tmp_path / "cache")],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(RUNNERS)},
    )  # fmt: skip
    assert done.returncode == 2
    assert "spec: source.sha256: must be a sha256" in done.stderr
    assert done.stdout == ""
    assert not (tmp_path / "cache").exists(), "a refused spec must touch nothing"


def test_it_reads_the_flags_with_the_configurations_build_table(tmp_path) -> None:
    """--ccache-dir and --release-url are read with the file's [build] table (its source_dirs
    kept): the tarball outside the listed directory is refused by the source rule, not taken for
    a usage error."""
    listed = tmp_path / "tarballs"
    config = tmp_path / "agent.toml"
    config.write_text(f'[build]\nsource_dirs = ["{listed}"]\n')
    path = tmp_path / "spec.json"
    source = {"kind": "tarball", "path": str(tmp_path / "x.tar.gz"), "sha256": "a" * 64}
    path.write_text(json.dumps(spec(source=source)))
    done = subprocess.run(
        [sys.executable, "-m", "benchhub_runner.cli", "build", str(path), "--config", str(config),
         "--cache-dir", str(tmp_path / "cache"), "--ccache-dir", str(tmp_path / "ccache"),
         "--release-url", "http://127.0.0.1:9/pub/source", "-q"],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(RUNNERS)},
    )  # fmt: skip
    assert "usage" not in done.stderr, done.stderr
    assert done.returncode != 0
    assert str(listed) in done.stderr, done.stderr
