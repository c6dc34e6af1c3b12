"""A recipe as the agent's build spec (benchhub_runner.build.spec, docs/agent.md "Building
PostgreSQL from source"): the one shape the server validates recipes against and sends with
a claimed job, so what the server accepts is exactly what the agent builds."""

from typing import Any

from benchhub.builds.models import Patch, Recipe


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
