"""The session model and everything that reads, analyses and summarises compile output.

Pure Python: no Qt, no torch. The GUI, the CLI and the CI gate all sit on top of this package.
"""
