"""Figures and findings derived from a session: fusion, break sites, verdict, problems, kernels, diffs."""
