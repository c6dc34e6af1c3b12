import pytest

from benchhub.bisections.search import Commit, Found, Narrowed, Next, RangeError, next_step


def line(count: int) -> list[Commit]:
    """c1 <- c2 <- ... <- c<count>, newest first; c1's parent is the good end (outside)."""
    made = [Commit(f"c{i}", (f"c{i - 1}",) if i > 1 else ("good",)) for i in range(1, count + 1)]
    return made[::-1]


def bisect(
    commits: list[Commit], culprit: str, *, unbuildable: frozenset[str] | set[str] = frozenset()
):
    """Run the search to its end, answering as a commit would: bad from the culprit on."""
    order = [c.sha for c in commits]
    bad, good, skipped, measured = [order[0]], [], [], []  # type: list[str], list[str], list[str], list[str]
    while True:
        outcome = next_step(commits, bad=bad, good=good, skipped=skipped)
        if not isinstance(outcome, Next):
            return outcome, measured
        measured.append(outcome.sha)
        if outcome.sha in unbuildable:
            skipped.append(outcome.sha)
        elif ancestor_or_self(commits, culprit, outcome.sha):
            bad.append(outcome.sha)
        else:
            good.append(outcome.sha)


def ancestor_or_self(commits, old, new):
    parents = {c.sha: c.parents for c in commits}
    stack, seen = [new], set()
    while stack:
        sha = stack.pop()
        if sha == old:
            return True
        seen.add(sha)
        stack.extend(p for p in parents.get(sha, ()) if p not in seen)
    return False


@pytest.mark.parametrize("culprit", [f"c{i}" for i in range(1, 9)])
def test_it_finds_any_commit_of_eight_in_three_measurements(culprit):
    outcome, measured = bisect(line(8), culprit)
    assert outcome == Found(culprit)
    assert len(measured) <= 3


def test_it_measures_the_middle_first():
    outcome = next_step(line(7), bad=["c7"])
    assert isinstance(outcome, Next)
    assert outcome.sha in {"c3", "c4"}
    assert outcome.remaining == 7


def test_it_steps_around_a_commit_that_does_not_build():
    # c4 is the first pick (the middle of seven, the newer of two equals) and does not build.
    outcome, measured = bisect(line(7), "c6", unbuildable={"c4"})
    assert outcome == Found("c6")
    assert measured[0] == "c4"
    assert len(measured) <= 4


def test_it_gives_the_narrowest_range_when_the_commit_before_is_skipped():
    # Whether c4 or c5 brought the change, c4's build cannot tell.
    outcome, _ = bisect(line(7), "c5", unbuildable={"c4"})
    assert isinstance(outcome, Narrowed)
    assert outcome.shas == ("c5", "c4")
    assert "was skipped" in outcome.reason


def test_it_narrows_to_the_skipped_commits_and_the_first_bad_one():
    commits = line(5)
    outcome = next_step(commits, bad=["c5", "c4"], good=["c1"], skipped=["c2", "c3"])
    assert outcome == Narrowed(("c4", "c3", "c2"), outcome.reason)
    assert "2 commits" in outcome.reason


def test_it_follows_a_merged_branch():
    # m merges b2 (a branch b1 <- b2 off the good end) into a3 (a1 <- a2 <- a3).
    commits = [
        Commit("a4", ("m",)),
        Commit("m", ("a3", "b2")),
        Commit("b2", ("b1",)),
        Commit("a3", ("a2",)),
        Commit("b1", ("good",)),
        Commit("a2", ("a1",)),
        Commit("a1", ("good",)),
    ]
    for culprit in ("b1", "b2", "a1", "a2", "a3", "m", "a4"):
        outcome, measured = bisect(commits, culprit)
        assert outcome == Found(culprit), culprit
        assert len(measured) <= 4


def test_a_good_verdict_on_a_branch_keeps_the_other_branch_a_candidate():
    commits = [
        Commit("m", ("a2", "b1")),
        Commit("b1", ("good",)),
        Commit("a2", ("a1",)),
        Commit("a1", ("good",)),
    ]
    outcome = next_step(commits, bad=["m"], good=["a2"])
    assert isinstance(outcome, Next) and outcome.sha == "b1"
    assert outcome.remaining == 2


def test_it_refuses_what_is_not_a_range():
    with pytest.raises(RangeError, match="empty"):
        next_step([], bad=["x"])
    with pytest.raises(RangeError, match="not in the range"):
        next_step(line(3), bad=["zz"])
    with pytest.raises(RangeError, match="twice"):
        next_step([Commit("a"), Commit("a")], bad=["a"])
    with pytest.raises(RangeError, match="both bad and good"):
        next_step(line(3), bad=["c3", "c2"], good=["c2"])
