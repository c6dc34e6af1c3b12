"""DRF plumbing that the apps use and that imports no app: the private-instance guard, permissions,
the error shape, strict fields, pagination, the request size limit, the schema and docs URLs."""
