"""Bisection of a performance change: which commit of a range carries it.

The pure parts are `search` (the next commit, merges and skipped commits as `git bisect` has
them) and `decide` (a step's verdict from the comparison statistics); `services` creates a
bisection, advances it one step after each of its jobs ends (`tasks`) and cancels it."""
