"""DRF plumbing only: authentication, error shape, pagination, strict fields, size limit, urls."""
