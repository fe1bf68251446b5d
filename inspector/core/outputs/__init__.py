"""Renderings of an analysis for people and programs: the summary JSON and text, the HTML report."""
