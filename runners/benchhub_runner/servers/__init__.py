"""The PostgreSQL servers a job runs: version names and releases (versions, releases,
capabilities), installations and their binaries (installation, provision, prebuilt, bindirs),
one cluster per version (cluster, on sessions and programs; conf for postgresql.conf), its
settings per major (gucs), tablespaces and huge pages."""
