"""The run history: every run the tool sees, kept in a local (or team) store so a run can be read
against the runs of the same script before it: trends, and alerts when something got worse."""
