"""What a job may bring to a host, checked before it runs: the whole job (checker), its SQL
and pgbench scripts (sql, read with the lexer of sqllex), its pgbench options (options), its
settings (settings; overrides is the allowlist) and what is refused (refusals). Standard
library only and pure; the server imports the checker too."""
