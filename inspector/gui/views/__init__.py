"""One widget per view; each takes the session model (and controllers it follows) and subscribes."""
