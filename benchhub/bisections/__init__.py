"""Bisection of a performance change: which commit of a range carries it (issue 12).

So far the pure parts: `search` (the next commit, merges and skipped commits as `git bisect`
has them) and `decide` (a step's verdict from the comparison statistics)."""
