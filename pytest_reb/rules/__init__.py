"""Every decision: evidence records in, strict and compat verdicts out; no target in reach."""
