"""The issue-ingest worker: incremental sweeps of issues, re-validation, and the schedule."""
