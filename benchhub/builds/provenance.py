"""A build's provenance as the pages show it: labelled rows of text, one fact each.

The agent records the provenance of a build from source (benchhub_runner.build.provenance): the
resolved commit or tarball digest, the patches and their digests, configure flags, CFLAGS,
the compiler and its version, pg_config and the build time. Pure code over a Build.
"""

from typing import Any

from benchhub.builds.models import Build


def _source(source: dict[str, Any]) -> str:
    kind = source.get("kind", "")
    if kind == "git" or source.get("commit"):
        where = source.get("repository") or source.get("location") or "git"
        ref = f" {source['ref']}" if source.get("ref") else ""
        date = f" ({source['commit_date']})" if source.get("commit_date") else ""
        return f"{where}{ref} at commit {source.get('commit', '?')}{date}"
    text = f"{kind} {source.get('release') or source.get('location') or ''}".strip()
    if source.get("tarball_sha256"):
        text += f", sha256 {source['tarball_sha256']}"
    return text


def provenance_rows(build: Build) -> list[tuple[str, str]]:
    """(label, text) rows for `build`; empty for a build not made from source here."""
    p = build.provenance or {}
    if not p:
        return []
    patches = p.get("patches") or []
    compiler = p.get("compiler") or {}
    ccache = p.get("ccache") or {}
    took = f"{p.get('build_seconds', '?')} s on {p.get('built_at', '?')}"
    rows = [
        (
            "Recipe",
            build.version
            + (f" (base {build.recipe.base})" if build.recipe and build.recipe.base else ""),
        ),
        ("Source", _source(p.get("source") or {})),
        (
            "Patches",
            ", ".join(f"{x.get('name')} (sha256 {x.get('sha256')})" for x in patches) or "none",
        ),
        ("Configure flags", " ".join(p.get("configure_flags") or []) or "none"),
        ("configure", " ".join(p.get("configure_args") or [])),
        ("CFLAGS", p.get("cflags") or "default"),
        ("Contrib", ", ".join(p.get("contrib") or []) or "none"),
        ("Compiler", f"{compiler.get('cc', '?')}: {compiler.get('version', '?')}"),
        (
            "Build time",
            f"{took}, make -j{p.get('jobs', '?')}"
            + (", ccache" if ccache.get("used") else "")
            + (f", {p['build_mode']}" if p.get("build_mode") else ""),
        ),
        ("Install key", str(p.get("key", ""))),
    ]
    pg_config = p.get("pg_config")
    if isinstance(pg_config, dict):
        rows += [(f"pg_config {k}", str(v)) for k, v in sorted(pg_config.items())]
    elif pg_config:
        rows.append(("pg_config", str(pg_config)))
    return rows


def build_facts(build: Build) -> dict[str, str]:
    """What a comparison names when two builds differ beyond their names: source, patches,
    configure flags, CFLAGS, contrib modules and compiler; empty for a build not made from
    source here. Reads the Build row only (no recipe), so a comparison's query count holds."""
    p = build.provenance or {}
    if not p:
        return {}
    patches = p.get("patches") or []
    compiler = p.get("compiler") or {}
    return {
        "source": _source(p.get("source") or {}),
        "patches": ", ".join(
            f"{x.get('name')} (sha256 {str(x.get('sha256', ''))[:12]})" for x in patches
        )
        or "none",
        "configure flags": " ".join(p.get("configure_flags") or []) or "none",
        "CFLAGS": p.get("cflags") or "default",
        "contrib": ", ".join(p.get("contrib") or []) or "none",
        "compiler": str(compiler.get("version") or compiler.get("cc") or "unknown"),
    }
