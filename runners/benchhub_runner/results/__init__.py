"""A run as the server receives it: the record of one version's run while its job goes on
(runs), its upload payload (payload), and historical pgbench outputs imported as one run
(importer)."""
