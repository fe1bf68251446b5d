"""FX graphs beyond parsing: grouping into modules, layout with Graphviz, structural diff."""
