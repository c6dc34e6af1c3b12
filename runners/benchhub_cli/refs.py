"""A bare git ref as a trial's base: `--against master`, `REL_15_STABLE`, a commit.

A ref alone names no repository and no build. The repository is `--repo URL`, or else the one
the server's git recipes (those without patches) build from; the build settings (configure
flags, CFLAGS, contrib) are those recipes' own, so the trial builds the ref as the server's
recipes of that repository build it. More than one repository, or recipes of one repository
that build it in different ways, make the ref ambiguous: a usage error naming the choices.

The base recipe the ref defines needs a version name (the server orders and matches builds by
it), read from the ref as PostgreSQL names its refs: `REL_15_18` is `15.18`, `REL_16_BETA1` is
`16beta1`, `REL_15_STABLE` is the branch as of today (`15-snapshot-2026-11-27`, which sorts after
every 15.x released by then), `master` (or `main`, `HEAD`) is `master`, a commit is
`master@<its first 12 digits>`. A recipe of the repository with that very ref and no patches is
the base as it is, whatever its name."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from benchhub_cli.errors import CliError

SETTINGS = ("configure_flags", "cflags", "contrib")
_RELEASE_TAG = re.compile(r"^REL_?(\d+)_(\d+)(?:_(\d+))?\Z")
_PRERELEASE_TAG = re.compile(r"^REL_?(\d+)(?:_(\d+))?_(ALPHA|BETA|RC)(\d+)\Z")
_STABLE_BRANCH = re.compile(r"^REL_?(\d+)(?:_(\d+))?_STABLE\Z")
_COMMIT = re.compile(r"^[0-9a-f]{7,40}\Z")
_HEADS = ("master", "main", "HEAD")


def ref_base(recipes: list[dict[str, Any]], *, ref: str, repo: str | None) -> dict[str, Any]:
    """The base recipe of a trial against git ref `ref`: an existing recipe of the repository
    with exactly that ref and no patches, else the recipe to define (`name`, `source`, the
    repository's settings). `recipes` is GET /api/v1/recipes/. CliError (status 2) when the
    repository or its settings are ambiguous, or the ref gives no version name."""
    url, settings = _repository(recipes, ref=ref, repo=repo)
    for recipe in recipes:
        source = recipe.get("source") or {}
        if (source.get("kind"), source.get("url"), source.get("ref")) == ("git", url, ref) and (
            not recipe.get("patches") and _settings(recipe) == settings
        ):
            return recipe
    return {"name": ref_name(ref), "source": {"kind": "git", "url": url, "ref": ref}, **settings}


def _repository(
    recipes: list[dict[str, Any]], *, ref: str, repo: str | None
) -> tuple[str, dict[str, Any]]:
    """The repository URL and build settings a bare ref is built with."""
    choices: dict[tuple[str, str], list[str]] = {}
    settings_of: dict[tuple[str, str], dict[str, Any]] = {}
    for recipe in recipes:
        source = recipe.get("source") or {}
        if source.get("kind") != "git" or recipe.get("patches"):
            continue
        if repo is not None and source.get("url") != repo:
            continue
        settings = _settings(recipe)
        key = (source["url"], repr(sorted(settings.items())))
        choices.setdefault(key, []).append(recipe["name"])
        settings_of[key] = settings
    if not choices:
        if repo is not None:
            return repo, {"configure_flags": [], "cflags": "", "contrib": []}
        raise CliError(
            f"--against: no recipe named {ref}, and as a git ref it names no repository: the "
            "server has no git recipe; pass --repo URL (or a recipe's name)"
        )
    if len(choices) > 1:
        listed = "; ".join(
            f"{url} as {', '.join(names)} build it{_described(settings_of[(url, s)])}"
            for (url, s), names in choices.items()
        )
        narrow = "--repo URL" if repo is None else "--against one of those recipes"
        raise CliError(
            f"--against: no recipe named {ref}, and as a git ref it is ambiguous: {listed}; "
            f"choose with {narrow}"
        )
    (key,) = choices
    return key[0], settings_of[key]


def _settings(recipe: dict[str, Any]) -> dict[str, Any]:
    return {
        "configure_flags": list(recipe.get("configure_flags") or []),
        "cflags": recipe.get("cflags") or "",
        "contrib": list(recipe.get("contrib") or []),
    }


def _described(settings: dict[str, Any]) -> str:
    said = [" ".join(settings["configure_flags"]), settings["cflags"]]
    said += [f"contrib {', '.join(settings['contrib'])}" if settings["contrib"] else ""]
    said = [s for s in said if s]
    return f" ({'; '.join(said)})" if said else ""


def ref_name(ref: str, *, today: dt.date | None = None) -> str:
    """The version name of a build of `ref` (module docstring); CliError when it has none."""
    if ref in _HEADS:
        return "master"
    if _COMMIT.match(ref):
        return f"master@{ref[:12]}"
    if found := _RELEASE_TAG.match(ref):
        major, minor = _major(found[1], found[2] if found[3] else None), found[3] or found[2]
        return f"{major}.{int(minor)}"
    if found := _PRERELEASE_TAG.match(ref):
        return f"{_major(found[1], found[2])}{found[3].lower()}{int(found[4])}"
    if found := _STABLE_BRANCH.match(ref):
        day = today or dt.datetime.now(dt.UTC).date()
        return f"{_major(found[1], found[2])}-snapshot-{day.isoformat()}"
    raise CliError(
        f"--against: no recipe named {ref}, and as a git ref it has no version name BenchHub "
        "can give it (master, a commit, REL_15_18, REL_16_BETA1, REL_15_STABLE); define its "
        "recipe on the recipes page and pass the recipe's name"
    )


def _major(first: str, second: str | None) -> str:
    """`9`, `6` -> `9.6` (before 10 a major has two numbers); `15`, None -> `15`."""
    return f"{int(first)}.{int(second)}" if int(first) < 10 and second is not None else first
