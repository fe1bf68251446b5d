"""Figures and findings derived from a session: fusion, break sites, verdict, issues, kernels, diffs."""
