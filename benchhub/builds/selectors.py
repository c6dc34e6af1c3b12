"""Reads for builds and recipes."""

from typing import Any

from django.contrib.auth.models import User
from django.db.models import Prefetch, QuerySet
from django.db.models.functions import Lower

from benchhub.builds.models import Build, Patch, Recipe
from benchhub.builds.specs import build_spec_pinned, recipe_spec

MAX_BUILDS = 1000
MAX_RECIPES = 500
# Patch texts are heavy: lists carry the patches' names and digests only.
PATCH_SUMMARY = ("id", "recipe_id", "position", "name", "sha256", "size", "uploaded_at")


def can_define_recipes(user: Any) -> bool:
    """Defining a recipe is a right of its own: staff, or the permission builds.add_recipe.
    (What a recipe names is code the agents compile and run on benchmark hosts.)"""
    return bool(
        isinstance(user, User)
        and user.is_active
        and (user.is_staff or user.has_perm("builds.add_recipe"))
    )


def build_list() -> QuerySet[Build]:
    """Builds in version order (see builds.versions), oldest first; bounded."""
    return Build.objects.order_by("sort_key", "commit", "origin")[:MAX_BUILDS]


def recipe_list() -> QuerySet[Recipe]:
    """Recipes in version order (a patched one right after its base), with their creator and
    their patches' summaries (no texts); two queries, bounded."""
    patches = Patch.objects.only(*PATCH_SUMMARY).order_by("position")
    return (
        Recipe.objects.select_related("created_by")
        .prefetch_related(Prefetch("patches", queryset=patches))
        .order_by("sort_key", "name")[:MAX_RECIPES]
    )


def recipe_get(*, name: str) -> Recipe | None:
    """The recipe of that name (case-insensitive), with its patches' summaries."""
    patches = Patch.objects.only(*PATCH_SUMMARY).order_by("position")
    return (
        Recipe.objects.select_related("created_by")
        .prefetch_related(Prefetch("patches", queryset=patches))
        .annotate(lname=Lower("name"))
        .filter(lname=name.strip().lower())
        .first()
    )


def recipe_specs(*, names: list[str]) -> dict[str, dict[str, Any]]:
    """The build spec of every recipe among `names` (job versions), keyed by the name as given;
    names that are no recipe are left out. Two queries whatever the number of names."""
    wanted = {name.strip().lower(): name.strip() for name in names}
    recipes = (
        Recipe.objects.annotate(lname=Lower("name"))
        .filter(lname__in=list(wanted))
        .prefetch_related(Prefetch("patches", queryset=Patch.objects.order_by("position")))
    )
    return {
        wanted[recipe.name.lower()]: recipe_spec(recipe, list(recipe.patches.all()))
        for recipe in recipes
    }


def recipe_names_among(*, names: list[str]) -> set[str]:
    """Which of `names` are recipes (lower case); one query."""
    lowered = [name.strip().lower() for name in names]
    found = Recipe.objects.annotate(lname=Lower("name")).filter(lname__in=lowered)
    return set(found.values_list("lname", flat=True))


def build_specs_pinned(
    *, builds: dict[str, Build], given: dict[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """For each version name (as a job names it) and the build it ran, the spec that makes that
    build again (builds.specs.build_spec_pinned); builds not made from source here are left
    out. `given`: the specs the builds' jobs sent, by the same names (their patch texts are
    used first, then the stored patches of that digest). One query at most.
    Raises BuildSpecError when a patch's text is nowhere to be found."""
    texts = {
        str(p["sha256"]): p["text"]
        for spec in given.values()
        for p in spec.get("patches") or []
        if isinstance(p, dict) and "text" in p
    }
    wanted = {
        str(p.get("sha256"))
        for build in builds.values()
        for p in (build.provenance or {}).get("patches") or []
    } - set(texts)
    if wanted:
        stored = Patch.objects.filter(sha256__in=sorted(wanted)).values_list("sha256", "text")
        texts.update((sha, text) for sha, text in stored)
    specs = {
        name: build_spec_pinned(build, given=given.get(name), patch_texts=texts)
        for name, build in builds.items()
    }
    return {name: spec for name, spec in specs.items() if spec is not None}
