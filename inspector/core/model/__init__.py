"""The session model: ranks, frames, compile units, their graphs, code and stages, and what could not be read."""
