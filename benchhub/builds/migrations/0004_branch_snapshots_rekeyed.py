"""Re-key the dated snapshots of a major's branch (`13-snapshot-2021-05-01`) by where the branch
stood that day: after 13.2, not before 13beta1 as the development head of that day.

Only names the grammar reads as such a snapshot change; recipes with a base keep the base's key
(their own part is their label), and a build made from a recipe keeps the recipe's key.
"""

from django.db import migrations

from benchhub_runner.servers.versions import VersionError, version_parse


def _branch_key(name):
    try:
        parsed = version_parse(name)
    except VersionError:
        return None
    return parsed.sort_key if parsed.branch else None


def rekey(apps, schema_editor):
    Recipe = apps.get_model("builds", "Recipe")
    Build = apps.get_model("builds", "Build")
    recipes = []
    for recipe in Recipe.objects.filter(base="").only("id", "name", "sort_key").iterator():
        key = _branch_key(recipe.name)
        if key is not None and key != recipe.sort_key:
            recipe.sort_key = key
            recipes.append(recipe)
    Recipe.objects.bulk_update(recipes, ["sort_key"], batch_size=500)
    builds = []
    for build in Build.objects.select_related("recipe").iterator():
        key = list(build.recipe.sort_key) if build.recipe_id else _branch_key(build.version)
        if key is not None and key != build.sort_key:
            build.sort_key = key
            builds.append(build)
    Build.objects.bulk_update(builds, ["sort_key"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [("builds", "0003_recipes_and_build_provenance")]

    operations = [migrations.RunPython(rekey, migrations.RunPython.noop)]
