"""Server configurations: the settings a run had in effect, deduplicated by hash, diffable."""
