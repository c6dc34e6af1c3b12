"""The import rules of docs/directory-structure.md ("Layers"), read from the source with `ast`:
every import statement counts, inside functions and under TYPE_CHECKING too. Tests and the
test helpers (testing/) may import any app; the project's wiring (urls.py, settings, celery)
sits above every app."""

import ast
from collections.abc import Iterator
from pathlib import Path

BENCHHUB = Path(__file__).resolve().parents[1]

# Bottom to top. An app imports only apps of lower layers, never one of its own layer or above.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("stats",),
    ("accounts",),
    ("hosts", "builds", "configs", "workloads"),
    ("results",),
    ("jobs",),
    ("compare",),
    ("regressions",),
    ("review", "bisections"),
    ("dashboard", "monitoring"),
)
# The pure statistics (stats/) import no Django, no wording module and no other module of the
# project: they return numbers, and the presentation side words them.
STATISTICS = "stats"
# The modules that build sentences from the statistics' numbers (presentation side).
WORDING = ("benchhub.compare.verdict_text",)
# Plumbing that the apps use and that imports no app: api/ and the project's shared modules.
PLUMBING = ("api", "errors", "digests", "querystrings", "blobs", "headers", "replica")
DJANGO = ("django", "rest_framework", "celery", "drf_spectacular")
LAYER_OF = {app: n for n, apps in enumerate(LAYERS) for app in apps}


def unit_of(dotted: str) -> str | None:
    """The layer's unit (an app, "stats" or a plumbing name) a benchhub module belongs to;
    None outside the project's apps and plumbing."""
    parts = dotted.split(".")
    if parts[0] != "benchhub" or len(parts) < 2:
        return None
    return parts[1] if parts[1] in LAYER_OF or parts[1] in PLUMBING else None


def imports_of(path: Path) -> Iterator[tuple[int, str]]:
    """(line, dotted name) of each import; `from a import b` gives a.b, which is the module b
    when b is one and otherwise names something in a."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield from ((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)


def modules() -> Iterator[tuple[str, Path]]:
    """(dotted name, path) of every module the rules govern."""
    for path in sorted(BENCHHUB.rglob("*.py")):
        parts = path.relative_to(BENCHHUB).with_suffix("").parts
        if "tests" in parts or parts[0] in ("testing", "conftest"):
            continue
        yield ".".join(("benchhub", *parts)), path


def violations() -> list[str]:
    found = []
    for name, path in modules():
        unit = unit_of(name)
        if unit is None:
            continue
        for line, target in imports_of(path):
            rule = broken_rule(unit, target)
            if rule:
                found.append(f"{path.relative_to(BENCHHUB.parent)}:{line} imports {target}: {rule}")
    return found


def broken_rule(unit: str, target: str) -> str:
    """The rule that `unit` importing `target` breaks, or ""."""
    other = unit_of(target)
    if unit == STATISTICS and target.split(".")[0] in DJANGO:
        return "statistics import no Django"
    if unit == STATISTICS and _is_wording(target):
        return "statistics import no wording module"
    if unit == STATISTICS and target.startswith("benchhub.") and other != STATISTICS:
        return "statistics import nothing else of the project"
    if unit in PLUMBING and other in LAYER_OF:
        return "api/ and the shared modules import no app"
    if unit in LAYER_OF and other in LAYER_OF and other != unit:
        if LAYER_OF[other] >= LAYER_OF[unit]:
            return f"{unit} imports only apps below it, and {other} is not"
    return ""


def _is_wording(target: str) -> bool:
    return any(target == module or target.startswith(f"{module}.") for module in WORDING)


def test_it_finds_every_app_in_one_layer() -> None:
    packages = {p.parent.name for p in BENCHHUB.glob("*/__init__.py")} - {"tests", "testing"}
    assert packages == set(LAYER_OF) | {"api"}
    assert all(
        (BENCHHUB.parent / f"{module.replace('.', '/')}.py").exists() for module in WORDING
    ), "a wording module moved: update WORDING and docs/directory-structure.md"


def test_it_names_the_rule_an_import_breaks() -> None:
    assert broken_rule("results", "benchhub.jobs.models.Job") == (
        "results imports only apps below it, and jobs is not"
    )
    assert broken_rule("hosts", "benchhub.builds.models.Build")  # the same layer
    assert broken_rule("jobs", "benchhub.results.models.Run") == ""
    assert broken_rule("results", "benchhub.stats.repeats.steady_state") == ""
    assert broken_rule("results", "benchhub.compare.selectors.x")
    assert broken_rule("stats", "django.db.models") == "statistics import no Django"
    assert broken_rule("stats", "benchhub.stats.noise.HostNoise") == ""
    assert broken_rule("stats", "benchhub.compare.verdict_text") == (
        "statistics import no wording module"
    )
    assert broken_rule("stats", "benchhub.compare.verdict_text.percent") == (
        "statistics import no wording module"
    )
    assert broken_rule("compare", "benchhub.compare.verdict_text") == ""
    assert broken_rule("stats", "benchhub.compare.describe") == (
        "statistics import nothing else of the project"
    )
    assert broken_rule("api", "benchhub.hosts.models.Host")


def test_it_reads_imports_inside_functions_and_for_types(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from benchhub.jobs.models import Job\n"
        "def f():\n    import benchhub.regressions.services\n"
        "    from benchhub.stats import repeats\n"
    )
    assert sorted(imports_of(module)) == [
        (1, "typing.TYPE_CHECKING"),
        (3, "benchhub.jobs.models.Job"),
        (5, "benchhub.regressions.services"),
        (6, "benchhub.stats.repeats"),
    ]
    assert unit_of("benchhub.stats.repeats") == "stats"


def test_it_keeps_every_import_to_the_layers() -> None:
    assert violations() == []


def test_it_draws_the_same_layers_in_the_docs() -> None:
    doc = (BENCHHUB.parent / "docs" / "directory-structure.md").read_text()
    drawn = [
        tuple(line.split("|")[2].split())
        for line in doc.split("## Layers", 1)[1].splitlines()
        if line.startswith("| ") and line.split("|")[1].strip().isdigit()
    ]
    assert drawn[::-1] == list(LAYERS)


def queries_of(path: Path) -> list[int]:
    """Lines of a module that import django.db or reach a model's manager (`X.objects`)."""
    found = [line for line, target in imports_of(path) if target.startswith("django.db")]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Attribute) and node.attr == "objects":
            found.append(node.lineno)
    return sorted(found)


def test_it_reads_compare_only_through_its_selectors() -> None:
    # compare/ reads through its selectors and writes through its services; the statistics'
    # wording, the tables and the presentations take what those read.
    querying = {
        name
        for name, path in modules()
        if name.startswith("benchhub.compare.")
        and not name.startswith("benchhub.compare.selectors")
        and name != "benchhub.compare.services"
        and queries_of(path)
    }
    assert querying == set()


def test_it_finds_a_query_by_its_manager_or_its_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("from django.db.models import Q\ndef f(Run):\n    return Run.objects.all()\n")
    assert queries_of(module) == [1, 3]
