"""The agent is built in layers, each a package (or one module) of benchhub_runner, and a layer
imports only the layers below it and itself: the parsers and the job-code checker know nothing of
servers, a server knows nothing of the job that runs it, and only the agent's loop and the
commands see everything. Read from the source with `ast`, imports inside functions included (a
deferred import is a dependency all the same). docs/directory-structure.md draws the layers.

Also held here: the package root stays a short list of modules, and no module grows past
MAX_LINES (past that, a module holds more than one concept and is split)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "benchhub_runner"
DOC = Path(__file__).resolve().parents[2] / "docs" / "directory-structure.md"

# Lowest first. A module may import its own layer and the layers listed before it.
LAYERS = [
    "parse",  # pgbench output, pure
    "jobcode",  # what a job may bring to a host, pure
    "transport",  # the HTTP client, the spool, the fetch policy
    "host",  # facts of the machine from /proc and /sys
    "sandbox",  # where and as whom job content runs
    "servers",  # versions, installations, clusters, their settings
    "build",  # PostgreSQL built from source
    "config",  # the agent's configuration file
    "jobspec",  # a claim as a typed job and its plan
    "evidence",  # what the server says while it is measured
    "measure",  # pgbench, streams, one level, OS telemetry
    "results",  # a run as the server receives it
    "job",  # one job from claim to upload
    "agent",  # the loop: claims, heartbeats, jobs, uploads
    "commands",  # the subcommands
    "cli",  # the entry point
]
MAX_TOP_LEVEL_MODULES = 10
MAX_LINES = 400


def layer_of(dotted: str) -> str | None:
    """The layer of a module named relative to the package ("servers.cluster" -> "servers");
    None for the package's own __init__."""
    return dotted.split(".")[0] or None


def imported(path: Path, root: Path) -> Iterator[tuple[int, str]]:
    """(line, module relative to the package `root`) of each import of that package in `path`,
    at any depth: module level, class bodies, functions, TYPE_CHECKING blocks."""
    relative = path.relative_to(root).with_suffix("").parts
    package = list(relative[:-1])
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == root.name:
                    yield node.lineno, alias.name.partition(".")[2]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                parts = [*base, *(node.module.split(".") if node.module else [])]
            elif node.module and node.module.split(".")[0] == root.name:
                parts = node.module.split(".")[1:]
            else:
                continue
            if parts:
                yield node.lineno, ".".join(parts)
            else:  # `from .. import x`: x is a module of the package root, or a layer
                for alias in node.names:
                    yield node.lineno, alias.name


def violations(root: Path, layers: list[str]) -> list[str]:
    """Each import under `root` of a layer above the importer's, as `path:line: a imports b`."""
    rank = {name: n for n, name in enumerate(layers)}
    found = []
    for path in sorted(root.rglob("*.py")):
        own = layer_of(".".join(path.relative_to(root).with_suffix("").parts))
        if own == "__init__":
            continue
        for line, target in imported(path, root):
            other = layer_of(target)
            if own is None or other is None:
                continue
            if other not in rank or own not in rank:
                found.append(f"{path.relative_to(root)}:{line}: {own} or {other} is in no layer")
            elif rank[other] > rank[own]:
                found.append(f"{path.relative_to(root)}:{line}: {own} imports {other}")
    return found


def test_it_finds_a_lower_layer_importing_a_higher_one(tmp_path: Path) -> None:
    root = tmp_path / PACKAGE.name
    (root / "low").mkdir(parents=True)
    (root / "high").mkdir()
    (root / "low" / "a.py").write_text(
        "from ..low import b\ndef f():\n    from ..high.c import thing\n"
    )
    (root / "low" / "b.py").write_text("import benchhub_runner.high.c\n")
    (root / "high" / "c.py").write_text("from ..low.a import f\nfrom .. import stray\n")
    assert violations(root, ["low", "high"]) == [
        "high/c.py:2: high or stray is in no layer",
        "low/a.py:3: low imports high",
        "low/b.py:1: low imports high",
    ]
    assert violations(root, ["low", "high", "stray"]) == [
        "high/c.py:2: high imports stray",
        "low/a.py:3: low imports high",
        "low/b.py:1: low imports high",
    ]


def test_it_imports_only_the_layers_below() -> None:
    assert violations(PACKAGE, LAYERS) == []


def test_it_places_every_package_and_root_module_in_a_layer() -> None:
    present = {
        path.stem if path.is_file() else path.name
        for path in PACKAGE.iterdir()
        if (path.suffix == ".py" and path.name != "__init__.py") or (path / "__init__.py").exists()
    }
    assert present == set(LAYERS)


def test_it_keeps_the_package_root_short_and_every_module_small() -> None:
    top = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top
    long = {
        str(path.relative_to(PACKAGE)): lines
        for path in PACKAGE.rglob("*.py")
        if (lines := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def test_it_lists_the_layers_as_the_documentation_draws_them() -> None:
    section = DOC.read_text().partition("## The agent's layers")[2].partition("\n## ")[0]
    rows = [line.split("|") for line in section.splitlines() if line.startswith("| ")]
    documented = {int(row[1]): row[2].strip() for row in rows if row[1].strip().isdigit()}
    assert [documented[n] for n in sorted(documented)] == LAYERS
