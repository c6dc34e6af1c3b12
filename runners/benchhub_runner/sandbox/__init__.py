"""Where job content runs and who runs it: the bubblewrap sandbox (bubblewrap), the cgroup
and launcher that confine a job's processes (confine), the job's throwaway account (account),
its files touched without following links (jobfs) and its processes (processes). A low layer:
it imports no other package of the agent."""
