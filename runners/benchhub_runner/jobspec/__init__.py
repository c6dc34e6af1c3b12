"""A claimed job as a typed value: its measurement plan (plan, which the server shares), the
parse of a claim into a JobSpec (spec), its workload (workload) and the claim's JSON read field
by field (fields). Pure code, read by measure, results and job."""
