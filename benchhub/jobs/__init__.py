"""The queue: benchmark plans (jobs), claims with leases, heartbeats, schedules."""
