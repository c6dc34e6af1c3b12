"""The statistics of BenchHub, pure code: numbers in, numbers out. No Django, no query, no
sentence (the words are compare.verdict_text's), like the agent's parser: figures (change %,
peak, geometric mean), repeats (a repeat's steady-state mean and its noise), noise (a host's
run-to-run variation), verdicts (faster, slower, same, inconclusive, with intervals) and
changepoints (where a series changed level). benchhub/tests/test_layers.py enforces it;
docs/statistics.md explains the method."""
