"""The agent itself: the loop that claims jobs, sends heartbeats, runs each job and uploads
what it measured (loop), and its terminal progress (progress). The highest layer below the
commands: it may import every package of the agent."""
