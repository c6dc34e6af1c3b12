"""No import cycles in benchhub/ or the agent (runners/benchhub_runner/), read from the source
with `ast`. The imports a module makes while it loads (under TYPE_CHECKING too) must form no
cycle at all. Imports inside functions count as well: a cycle through a deferred import still
makes a reader hold both modules in mind at once, and it only loads by luck of order; the few
that remain are listed in DEFERRED_CYCLES, which may only shrink. An import of a module counts
as an edge to that module; an import of a name counts as an edge to the module that holds the
name, so importing through a package's __init__ is an edge to the __init__. What Python runs
when a module loads (no TYPE_CHECKING block, no function body, but every package __init__ on the
way to an imported module) must form no cycle either."""

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = (ROOT / "benchhub", ROOT / "runners" / "benchhub_runner")
# Cycles closed only by an import inside a function. In each, a service queues its own app's
# Celery task after the commit, and the task module imports the service it runs: the task
# (a thin wrapper) would have to move into the service module, or the service queue it by name.
DEFERRED_CYCLES = [
    ["benchhub.bisections.services", "benchhub.bisections.tasks"],
    [
        "benchhub.regressions.notifications",
        "benchhub.regressions.services",
        "benchhub.regressions.tasks",
    ],
    ["benchhub.results.services", "benchhub.results.tasks"],
]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[0] == "runners":
        parts = parts[1:]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def sources() -> dict[str, Path]:
    """Dotted name -> path of every module governed, tests and test helpers left out."""
    found = {}
    for package in PACKAGES:
        for path in sorted(package.rglob("*.py")):
            parts = path.relative_to(package).parts
            if "tests" in parts or parts[0] in ("testing", "conftest.py"):
                continue
            found[module_name(path)] = path
    return found


def imports_in(tree: ast.AST, *, deferred: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements of a module; inside functions only when `deferred`."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif deferred or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from imports_in(node, deferred=deferred)


def targets_of(
    name: str, path: Path, known: set[str], *, deferred: bool = True, tree: ast.AST | None = None
) -> Iterator[str]:
    """The governed modules `name` imports (read from `tree` when given), relative imports
    resolved; with `deferred`, those imported inside functions too."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = tree or ast.parse(path.read_text(), str(path))
    for node in imports_in(tree, deferred=deferred):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield from _known(alias.name, known)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(package, node.module, node.level)
            for alias in node.names:
                dotted = f"{base}.{alias.name}"
                yield from _known(dotted if dotted in known else base, known)


def _absolute(package: str, module: str | None, level: int) -> str:
    if level == 0:
        return module or ""
    parts = package.split(".")
    base = ".".join(parts[: len(parts) - level + 1])
    return f"{base}.{module}" if module else base


def _known(dotted: str, known: set[str]) -> Iterator[str]:
    if dotted in known:
        yield dotted


def graph(*, deferred: bool) -> dict[str, set[str]]:
    found = sources()
    known = set(found)
    return {
        name: set(targets_of(name, path, known, deferred=deferred)) - {name}
        for name, path in found.items()
    }


def loaded_by(name: str, path: Path, known: set[str]) -> set[str]:
    """The governed modules Python runs when `name` loads: its imports outside functions and
    TYPE_CHECKING blocks, and the packages above each (importing a.b.c runs a.b's __init__),
    leaving out the packages `name` itself sits in, which ran before it."""
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            node.body = []
    runs = set(targets_of(name, path, known, deferred=False, tree=tree))
    own = {".".join(name.split(".")[:n]) for n in range(1, name.count(".") + 2)}
    for target in list(runs):
        parts = target.split(".")
        runs |= {".".join(parts[:n]) for n in range(1, len(parts))} & known
    return runs - own


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(edges.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)


def test_it_finds_a_cycle_and_only_the_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": {"a"}}
    assert cycles(edges) == [["a", "b", "c"], ["d", "e"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_it_resolves_relative_imports_and_names_in_packages(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from . import job\nfrom .jobspec import JobSpec\n"
        "def f():\n    from ..other import thing\n    import pkg.sub.deep\n"
    )
    known = {"pkg", "pkg.sub", "pkg.sub.job", "pkg.sub.jobspec", "pkg.other", "pkg.sub.deep"}
    assert sorted(targets_of("pkg.sub.m", module, known)) == [
        "pkg.other",
        "pkg.sub.deep",
        "pkg.sub.job",
        "pkg.sub.jobspec",
    ]


def test_it_reads_a_functions_imports_only_when_deferred(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.typed\n"
        "class C:\n    import pkg.body\n"
        "def f():\n    import pkg.later\n"
    )
    known = {"pkg.typed", "pkg.body", "pkg.later"}
    assert sorted(targets_of("pkg.m", module, known, deferred=False)) == ["pkg.body", "pkg.typed"]
    assert sorted(targets_of("pkg.m", module, known)) == ["pkg.body", "pkg.later", "pkg.typed"]


def _named(found: list[list[str]]) -> str:
    return "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_it_has_no_import_cycle_while_modules_load() -> None:
    found = cycles(graph(deferred=False))
    assert found == [], _named(found)


def test_it_has_no_import_cycle_through_functions_beyond_the_listed() -> None:
    found = cycles(graph(deferred=True))
    new = [c for c in found if c not in DEFERRED_CYCLES]
    assert new == [], _named(new)
    # A listed cycle that is gone comes off the list.
    assert [c for c in DEFERRED_CYCLES if c not in found] == []


def test_it_runs_the_packages_on_the_way_but_not_what_is_only_typed(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.typed\n"
        "from pkg.sub.deep import x\nfrom . import sibling\n"
    )
    known = {"pkg", "pkg.sub", "pkg.sub.deep", "pkg.typed", "pkg.sibling"}
    assert loaded_by("pkg.m", module, known) == {"pkg.sub", "pkg.sub.deep", "pkg.sibling"}


def test_it_loads_every_module_without_a_cycle() -> None:
    modules = sources()
    known = set(modules)
    found = cycles({name: loaded_by(name, path, known) for name, path in modules.items()})
    assert found == [], _named(found)
