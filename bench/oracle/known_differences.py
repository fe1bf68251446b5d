"""Fields where the project's facts still differ from torch's own record, by case, each with its
reason (docs/fidelity.md lists them): routed to whoever fixes them. The tests hold every other field
of their cases equal to torch's record; remove an entry when its fix lands."""

KNOWN: dict[tuple[str, str], str] = {}
