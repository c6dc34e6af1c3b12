"""The recipes page: every build recipe in version order, and (for those allowed) a form to
define one, with its patches uploaded as files."""

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from benchhub.builds import services
from benchhub.builds.selectors import can_define_recipes, recipe_list
from benchhub.builds.specs import recipe_source
from benchhub.dashboard.forms import RecipeForm
from benchhub.errors import ApplicationError

# Request fields of the recipe service -> the form's fields, for errors.
_FIELDS = {
    "source.kind": "kind",
    "source.version": "release",
    "source.url": "url",
    "source.path": "path",
    "source.sha256": "sha256",
    "source.ref": "ref",
    "source.branch": "branch",
    "source.date": "date",
    "file": "patches",
    "patches": "patches",
}


def _form_field(path: str) -> str:
    if path.startswith("configure_flags"):
        return "configure_flags"
    if path.startswith("contrib"):
        return "contrib"
    if path.startswith("patches"):
        return "patches"
    return _FIELDS.get(path, path)


def recipes(request: HttpRequest) -> HttpResponse:
    allowed = can_define_recipes(request.user)
    form = RecipeForm(request.POST or None, request.FILES or None) if allowed else None
    if form is not None and request.method == "POST" and form.is_valid():
        try:
            recipe = services.recipe_create(**form.recipe_request(), created_by=request.user)
        except ApplicationError as exc:
            field = _form_field(exc.field or "")
            form.add_error(field if field in form.fields else None, exc.detail)
        else:
            return redirect(f"/recipes/#recipe-{recipe.pk}")
    rows: list[dict[str, Any]] = [
        {"recipe": r, "source": recipe_source(r), "patches": list(r.patches.all())}
        for r in recipe_list()
    ]
    context = {"rows": rows, "form": form, "allowed": allowed}
    return render(request, "dashboard/recipes.html", context)
