"""Which commit a bisection measures next, and when it is done. Pure code, no Django.

The range is what `git rev-list bad ^good` lists: every commit reachable from the bad end and
not from the good one, merges and the commits of merged branches included (the agent sends it
with each commit's parents, newest first in topological order). The search follows `git
bisect`:

- the candidates are the ancestors of the newest commit found bad (itself included) that are
  not ancestors of a commit found good;
- the next commit to measure is the candidate whose own ancestors among the candidates come
  closest to half of them (so either verdict removes about half), never a skipped commit
  (one that does not build, or whose verdict stayed unknown), ties going to the newer commit;
- one candidate left: it is the first bad commit. Only skipped candidates left besides the bad
  end: the narrowest range is those commits, and the search says why it cannot go further.

Parents outside the range are not followed: they are ancestors of the good end.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

# A bisection over more commits than this is refused when it is created: the weights below are
# computed per candidate (quadratic), and a range of a few thousand is already years of master.
MAX_COMMITS = 5000


@dataclass(frozen=True)
class Commit:
    """A commit of the range: its id and the ids of its parents (those outside are ignored)."""

    sha: str
    parents: tuple[str, ...] = ()


@dataclass(frozen=True)
class Next:
    """Measure `sha` next: `remaining` candidates now, about `steps_left` more verdicts."""

    sha: str
    remaining: int
    steps_left: int


@dataclass(frozen=True)
class Found:
    """The first bad commit."""

    sha: str


@dataclass(frozen=True)
class Narrowed:
    """The search cannot go further: the first bad commit is one of `shas` (newest first),
    every one of them but the bad end skipped."""

    shas: tuple[str, ...]
    reason: str


Outcome = Next | Found | Narrowed


class RangeError(ValueError):
    """The commits do not make a range a bisection can search."""


def next_step(
    commits: Sequence[Commit],
    *,
    bad: Sequence[str],
    good: Collection[str] = (),
    skipped: Collection[str] = (),
) -> Outcome:
    """What to do after these verdicts. `commits` is the range, newest first in topological
    order; its first commit is the bad end. `bad` lists the commits found bad in the order the
    verdicts came (the bad end first); `good` the commits of the range found good."""
    graph = _graph(commits)
    order = {c.sha: i for i, c in enumerate(commits)}
    newest_bad = _newest_bad(bad, graph)
    candidates = _ancestors(newest_bad, graph)
    for sha in good:
        if sha in graph:
            candidates -= _ancestors(sha, graph)
    if newest_bad not in candidates:
        raise RangeError(f"{newest_bad[:12]} was found both bad and good (or below a good one)")
    if len(candidates) == 1:
        return Found(newest_bad)
    testable = candidates - {newest_bad} - set(skipped)
    if not testable:
        left = tuple(sorted(candidates, key=order.__getitem__))
        return Narrowed(left, _why_narrowed(len(left) - 1))
    total = len(candidates)
    best = min(
        testable,
        key=lambda sha: (abs(total - 2 * len(_ancestors(sha, graph) & candidates)), order[sha]),
    )
    return Next(best, remaining=total, steps_left=max(1, (total - 1).bit_length()))


def _why_narrowed(skipped: int) -> str:
    if skipped == 1:
        return "the commit before the first bad one was skipped: it could not be measured"
    return (
        f"the {skipped} commits before the first bad one were all skipped: none could be measured"
    )


def _graph(commits: Sequence[Commit]) -> Mapping[str, tuple[str, ...]]:
    if not commits:
        raise RangeError("the range is empty: the good commit is not older than the bad one")
    if len(commits) > MAX_COMMITS:
        raise RangeError(f"the range has {len(commits)} commits, more than {MAX_COMMITS}")
    graph = {c.sha: c.parents for c in commits}
    if len(graph) != len(commits):
        raise RangeError("a commit is listed twice")
    return {sha: tuple(p for p in parents if p in graph) for sha, parents in graph.items()}


def _newest_bad(bad: Sequence[str], graph: Mapping[str, tuple[str, ...]]) -> str:
    """The last verdict of bad: each one is an ancestor of the one before, since only
    candidates are measured."""
    if not bad:
        raise RangeError("a bisection needs its bad end")
    unknown = [sha for sha in bad if sha not in graph]
    if unknown:
        raise RangeError(f"{unknown[0][:12]} is not in the range")
    return bad[-1]


def _ancestors(sha: str, graph: Mapping[str, tuple[str, ...]]) -> set[str]:
    """`sha` and every commit of the range it descends from."""
    seen = {sha}
    stack = [sha]
    while stack:
        for parent in graph[stack.pop()]:
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    return seen
