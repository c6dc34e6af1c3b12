"""A recipe as the agent's build spec (benchhub_runner.build.spec, docs/agent.md "Building
PostgreSQL from source"): the one shape the server validates recipes against and sends with
a claimed job, so what the server accepts is exactly what the agent builds; and a build as it
was made (its provenance) as the spec that makes it again, for reruns."""

from typing import Any

from benchhub.builds.models import Build, Patch, Recipe
from benchhub.errors import ApplicationError


def recipe_source(recipe: Recipe) -> dict[str, Any]:
    """The recipe's `source` object of the spec."""
    if recipe.source_kind == Recipe.Kind.RELEASE:
        return {"kind": "release", "version": recipe.release}
    if recipe.source_kind == Recipe.Kind.TARBALL:
        where = {"url": recipe.url} if recipe.url else {"path": recipe.path}
        return {"kind": "tarball", **where, "sha256": recipe.sha256}
    if recipe.ref:
        return {"kind": "git", "url": recipe.url, "ref": recipe.ref}
    date = recipe.snapshot_date.isoformat() if recipe.snapshot_date else None
    return {"kind": "git", "url": recipe.url, "branch": recipe.branch, "date": date}


def recipe_spec(recipe: Recipe, patches: list[Patch]) -> dict[str, Any]:
    """The build spec of `recipe` with `patches` (in order), patch texts inline."""
    return {
        "name": recipe.name,
        "source": recipe_source(recipe),
        "patches": [{"name": p.name, "sha256": p.sha256, "text": p.text} for p in patches],
        "configure_flags": list(recipe.configure_flags),
        "cflags": recipe.cflags or None,
        "contrib": list(recipe.contrib),
    }


class BuildSpecError(ApplicationError):
    """A build that cannot be made again as it was: its provenance names a patch whose text
    the server no longer has (code `invalid`)."""


def build_spec_pinned(
    build: Build, *, given: dict[str, Any] | None, patch_texts: dict[str, str]
) -> dict[str, Any] | None:
    """The spec that builds exactly `build` again: its provenance (what the agent built) with
    the source pinned to the resolved input (a git commit rather than a branch that moves on),
    the patches it applied (texts from `patch_texts`, by sha256), its configure flags and CFLAGS.
    `given` is the spec its job sent, if known: its name and contrib list are kept as sent (the
    provenance lists contrib merged with the major's defaults, and the agent's install key
    reads the list as sent), so an unchanged input reuses the same install and the runs land on
    the same Build. None for a build not made from source here (no provenance).
    Raises BuildSpecError when a patch's text is not in `patch_texts`."""
    p = build.provenance or {}
    if not p:
        return None
    patches = []
    for patch in p.get("patches") or []:
        text = patch_texts.get(str(patch.get("sha256")))
        if text is None:
            raise BuildSpecError(
                "invalid",
                f"{build.version} was built with the patch {patch.get('name')} (sha256 "
                f"{patch.get('sha256')}), whose text is no longer stored.",
                field="versions",
            )
        patches.append({"name": patch["name"], "sha256": patch["sha256"], "text": text})
    spec: dict[str, Any] = {
        "name": (given or {}).get("name") or p.get("name") or build.version,
        "source": _pinned_source(p.get("source") or {}, (given or {}).get("source")),
        "patches": patches,
        "configure_flags": list(p.get("configure_flags") or []),
        "cflags": p.get("cflags") or None,
        "contrib": list((given or p).get("contrib") or []),
    }
    # Recorded as the table used, or null when the spec turned the major's defaults off.
    if "major_defaults" in p and p["major_defaults"] is None:
        spec["major_defaults"] = False
    return spec


def _pinned_source(resolved: dict[str, Any], given: dict[str, Any] | None) -> dict[str, Any]:
    """The spec's source for the input the agent resolved (benchhub_runner.build.sources)."""
    if resolved.get("commit"):
        url = resolved.get("repository") or (given or {}).get("url")
        return {"kind": "git", "url": url, "ref": resolved["commit"]}
    if resolved.get("kind") == "release" and resolved.get("release"):
        return {"kind": "release", "version": resolved["release"]}
    if given is not None and given.get("sha256") == resolved.get("tarball_sha256"):
        return given  # a tarball source names its exact input already
    location = str(resolved.get("location") or "")
    where = "path" if location.startswith("/") else "url"
    return {"kind": "tarball", where: location, "sha256": resolved.get("tarball_sha256")}
