"""Facts of the host read from /proc and /sys: host facts for a run (sysinfo), mounts, disks
and their I/O counters (disks), process trees (proctree), files and commands that may be
missing (reading), and the tags a host offers (tags). A low layer: it imports no other package
of the agent."""
