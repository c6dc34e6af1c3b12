"""Writes for builds and recipes.

A recipe is checked here with the agent's own spec rules (benchhub_runner.build.spec), plus the
server's: its name is a version name, its base exists in the grammar, configure flags and CFLAGS
carry no shell metacharacters. The agent passes flags to configure as argv, never through a
shell, but CFLAGS reach make's command lines, which a shell runs: refusing the characters a shell
acts on keeps a recipe a list of compiler options. Nothing is written unless all of it passes.
"""

import hashlib
import re
import urllib.parse
from dataclasses import dataclass
from typing import Any

from benchhub_runner.build.spec import (
    MAX_PATCH_BYTES,
    MAX_PATCHES,
    SpecError,
    spec_parse,
)
from benchhub_runner.transport.urlpolicy import host_refusal
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Max

from benchhub.builds.models import Build, Patch, Recipe
from benchhub.builds.specs import recipe_spec
from benchhub.builds.versions import PATCH_MARK, VersionError, version_parse
from benchhub.errors import ApplicationError

# What a configure switch's value and CFLAGS may hold: option text, paths, no shell syntax.
_SAFE_FLAG = re.compile(r"^--[a-z0-9-]+(?:=[A-Za-z0-9_=+,.:/%@-]*)?\Z")
_SAFE_CFLAGS = re.compile(r"^[A-Za-z0-9 _=+,.:/%-]*\Z")
_PATCH_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,99}\Z")
MAX_RECIPE_PATCH_BYTES = MAX_PATCH_BYTES


class RecipeError(ApplicationError):
    """A recipe or patch the server refuses; `field` names the request field at fault. Codes:
    `invalid` (400), `recipe_exists` (409), `not_found` (404)."""


@dataclass(frozen=True)
class PatchIn:
    """A patch as uploaded: a file-like name and its bytes."""

    name: str
    content: bytes


def build_get_or_create(
    *,
    version: str,
    commit: str = "",
    configure_flags: str = "",
    origin: str = Build.Origin.UNKNOWN,
    provenance: dict[str, Any] | None = None,
) -> Build:
    """The build with this identity, created if new. Raises VersionError for an unknown name.

    A build from source (`provenance` given, as the agent recorded it) is identified by its
    install key too, so one name built from different inputs makes different builds; it is
    linked to the recipe of its name and sorts where the recipe does (after its base).
    """
    parsed = version_parse(version)
    provenance = provenance or {}
    recipe = _recipe_named(parsed.name) if provenance else None
    identity = build_identity(
        version=version,
        commit=commit,
        configure_flags=configure_flags,
        origin=origin,
        provenance=provenance,
    )
    build, _ = Build.objects.get_or_create(
        **identity,
        defaults={
            "major": parsed.major,
            "minor": parsed.minor,
            "stage": parsed.stage,
            "stage_number": parsed.stage_number,
            "snapshot_date": parsed.snapshot_date,
            "sort_key": recipe.sort_key if recipe else parsed.sort_key,
            "provenance": provenance,
            "recipe": recipe,
        },
    )
    return build


def build_identity(
    *,
    version: str,
    commit: str = "",
    configure_flags: str = "",
    origin: str = Build.Origin.UNKNOWN,
    provenance: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The fields that tell builds apart (Build's unique constraint) for build_get_or_create's
    arguments: a filter for Build.objects. Raises VersionError for an unknown name."""
    parsed = version_parse(version)
    return {
        "version": parsed.name,
        "commit": commit or parsed.commit,
        "configure_flags": configure_flags,
        "origin": origin,
        "input_key": str((provenance or {}).get("key", ""))[:64],
    }


def _recipe_named(name: str) -> Recipe | None:
    return Recipe.objects.filter(name__iexact=name.strip()).first()


def recipe_create(
    *,
    name: str,
    source: dict[str, Any],
    base: str = "",
    description: str = "",
    configure_flags: list[str] | None = None,
    cflags: str = "",
    contrib: list[str] | None = None,
    patches: list[PatchIn] | None = None,
    created_by: Any = None,
) -> Recipe:
    """Define a recipe (with its first patches, in order), in one transaction.

    RecipeError `invalid` naming the field (`name`, `source.sha256`, `configure_flags[1]`,
    `patches[0]`) when any part fails the checks; `recipe_exists` (409) when the name is taken.
    """
    flags, contrib = list(configure_flags or []), list(contrib or [])
    parsed = _recipe_name(name)
    sort_key = _sort_key(parsed.name, base)
    _check_flags(flags, cflags)
    recipe = Recipe(
        name=parsed.name,
        base=base.strip(),
        description=description,
        configure_flags=flags,
        cflags=cflags.strip(),
        contrib=list(dict.fromkeys(contrib)),
        sort_key=sort_key,
        created_by=created_by,
        **_source_fields(source),
    )
    rows = [
        _patch_row(recipe, position=i + 1, patch=p, field=f"patches[{i}]", by=created_by)
        for i, p in enumerate(patches or [])
    ]
    _check_spec(recipe, rows, source=source)
    try:
        with transaction.atomic():
            if Recipe.objects.filter(name__iexact=recipe.name).exists():
                raise _exists(recipe.name)
            recipe.save()
            for row in rows:
                row.recipe = recipe
            Patch.objects.bulk_create(rows)
    except IntegrityError:
        raise _exists(recipe.name) from None
    return recipe


def recipe_patch_add(*, recipe: Recipe, patch: PatchIn, uploaded_by: Any = None) -> Patch:
    """Append a patch to `recipe` (applied after those it has). RecipeError `invalid` naming
    `file` or `name` when the patch is unusable or would make the recipe so."""
    with transaction.atomic():
        locked = Recipe.objects.select_for_update().get(pk=recipe.pk)
        existing = list(Patch.objects.filter(recipe=locked).order_by("position"))
        if len(existing) >= MAX_PATCHES:
            raise RecipeError(
                "invalid", f"A recipe has at most {MAX_PATCHES} patches.", field="file"
            )
        if any(p.name == patch.name for p in existing):
            raise RecipeError(
                "invalid", f"This recipe already has a patch named {patch.name}.", field="name"
            )
        last = Patch.objects.filter(recipe=locked).aggregate(m=Max("position"))["m"] or 0
        row = _patch_row(locked, position=last + 1, patch=patch, field="file", by=uploaded_by)
        _check_spec(locked, [*existing, row], field="file")
        row.save()
    return row


# --- checks ----------------------------------------------------------------------------------


def _recipe_name(name: str) -> Any:
    try:
        parsed = version_parse(name)
    except VersionError as exc:
        raise RecipeError("invalid", str(exc), field="name") from None
    if parsed.series:
        raise RecipeError(
            "invalid",
            f"'{parsed.name}' names a whole major; name the build: 9.6.24, 14beta1, "
            f"master@1a2b3c4, 14devel-2021-05-01, master{PATCH_MARK}my-patch",
            field="name",
        )
    return parsed


def _sort_key(name: str, base: str) -> list[int]:
    """The name's own key, or with a base, the base's key (a recipe's, else the version's)
    followed by the name's label: `master+x` based on `master@1a2b3c4` sorts right after it."""
    parsed = version_parse(name)
    base = base.strip()
    if not base:
        return parsed.sort_key
    if base.lower() == name.lower():
        raise RecipeError("invalid", "A recipe cannot be its own base.", field="base")
    recipe = _recipe_named(base)
    if recipe is not None:
        head = list(recipe.sort_key)
    else:
        try:
            head = version_parse(base).sort_key
        except VersionError as exc:
            raise RecipeError(
                "invalid", f"The base must be a release or another recipe: {exc}", field="base"
            ) from None
    label = parsed.label or parsed.name.lower()
    return head + [ord(char) for char in label]


def _check_flags(flags: list[str], cflags: str) -> None:
    for i, flag in enumerate(flags):
        if not isinstance(flag, str) or not _SAFE_FLAG.match(flag):
            raise RecipeError(
                "invalid",
                f"{str(flag)[:80]!r} is not a configure switch: --name or --name=value, where "
                "the value holds letters, digits and _=+,.:/%@- only (no spaces or shell syntax)",
                field=f"configure_flags[{i}]",
            )
    if not _SAFE_CFLAGS.match(cflags):
        raise RecipeError(
            "invalid",
            "CFLAGS hold compiler options only: letters, digits, spaces and _=+,.:/%- "
            "(no quotes, $, `, ;, |, & or other shell syntax)",
            field="cflags",
        )


def _source_fields(source: dict[str, Any]) -> dict[str, Any]:
    """The recipe's columns of a spec-shaped `source` (checked with the spec later)."""
    kind = source.get("kind")
    if kind not in Recipe.Kind.values:
        raise RecipeError("invalid", "One of release, tarball, git.", field="source.kind")
    try:
        # The spec's own reading of the source: its checks, its messages, its field names.
        parsed = spec_parse({"name": "recipe", "source": source}).source
    except SpecError as exc:
        raise RecipeError("invalid", exc.message, field=exc.field) from None
    url = getattr(parsed, "url", None)
    if url and not settings.BENCHHUB_SOURCES_ALLOW_PRIVATE:
        _check_source_address(url)

    def text(key: str) -> str:
        value = source.get(key)
        return value.strip() if isinstance(value, str) else ""

    return {
        "source_kind": kind,
        "release": text("version"),
        "url": text("url"),
        "path": text("path"),
        "sha256": text("sha256").lower(),
        "ref": text("ref"),
        "branch": text("branch"),
        "snapshot_date": getattr(parsed, "date", None),
    }


def _check_source_address(url: str) -> None:
    """Refuse a network url naming an address the fetch policy refuses, as far as the server
    can tell without a lookup (a literal address, localhost): the person writing the recipe
    reads why here rather than in a failed build. A name is checked by the agent that
    resolves it; a path or file:// by its [build] source_dirs."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() not in ("http", "https", "git") or not parts.hostname:
        return
    refused = host_refusal(parts.hostname)
    if refused:
        raise RecipeError(
            "invalid",
            f"{refused}, not a public address: agents fetch sources from public addresses "
            "only (BENCHHUB_SOURCES_ALLOW_PRIVATE on the server, and [build] "
            "allow_private_sources on each agent, allow private ones).",
            field="source.url",
        )


def _patch_row(recipe: Recipe, *, position: int, patch: PatchIn, field: str, by: Any) -> Patch:
    if not _PATCH_NAME.match(patch.name):
        raise RecipeError(
            "invalid",
            "A patch name is file-like: letters, digits and ._+- (up to 100), e.g. fix.patch.",
            field="name" if field == "file" else f"{field}.name",
        )
    if len(patch.content) > MAX_RECIPE_PATCH_BYTES:
        raise RecipeError(
            "invalid", f"A patch is at most {MAX_RECIPE_PATCH_BYTES} bytes.", field=field
        )
    try:
        text = patch.content.decode("utf-8")
    except UnicodeDecodeError:
        raise RecipeError("invalid", "A patch must be UTF-8 text.", field=field) from None
    if not text.strip() or "\x00" in text:
        raise RecipeError("invalid", "A patch must be non-empty text.", field=field)
    return Patch(
        recipe=recipe,
        position=position,
        name=patch.name,
        sha256=hashlib.sha256(patch.content).hexdigest(),
        text=text,
        size=len(patch.content),
        uploaded_by=by,
    )


def _check_spec(
    recipe: Recipe,
    patches: list[Patch],
    *,
    field: str | None = None,
    source: dict[str, Any] | None = None,
) -> None:
    """The agent's checks, on the spec this recipe sends: what passes here, the agent builds.
    `source` is the request's own source object, checked as sent (unknown keys, both url and
    path, ...) before the stored recipe's."""
    total = sum(p.size for p in patches)
    if total > MAX_RECIPE_PATCH_BYTES:
        raise RecipeError(
            "invalid",
            f"A recipe's patches are at most {MAX_RECIPE_PATCH_BYTES} bytes together.",
            field=field or "patches",
        )
    spec = recipe_spec(recipe, patches)
    try:
        if source is not None:
            spec_parse({**spec, "source": source})
        spec_parse(spec)
    except SpecError as exc:
        where = field or exc.field
        raise RecipeError("invalid", exc.message, field=where) from None


def _exists(name: str) -> RecipeError:
    return RecipeError(
        "recipe_exists", f"A recipe named {name} exists already.", field="name", status=409
    )
