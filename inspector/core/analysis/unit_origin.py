"""Who asked for a compile: the user's torch.compile, or torch itself for an eager call of an operator
that compiles its functions (`torch.cond` and `torch.while_loop` compile their branches, flex_attention
its score function). Advice differs: the user never passed those functions to torch.compile, so
"compile with dynamic=True" cannot apply to them."""

from __future__ import annotations

import re

from inspector.core.model.session import CompileUnit

# The frame Dynamo compiled lies in torch's own operator code: its wrapper of the user's functions
_STARTED_BY_TORCH = re.compile(r"[/\\]torch[/\\](?:_higher_order_ops[/\\](?P<hop>\w+)\.py"
                               r"|nn[/\\]attention[/\\](?P<attention>flex_attention)\.py)$")
_OPERATORS = {"cond": "torch.cond", "while_loop": "torch.while_loop", "scan": "torch.scan",
              "associative_scan": "associative_scan", "map": "torch.map", "flex_attention": "flex_attention"}


def eager_trigger(unit: CompileUnit) -> str | None:
    """The operator whose eager call made torch compile `unit` (`torch.cond`), or None for a compile the
    user asked for."""
    if unit.location is None:
        return None
    found = _STARTED_BY_TORCH.search(unit.location.file)
    if found is None:
        return None
    module = found["hop"] or found["attention"]
    return _OPERATORS.get(module, f"torch's {module}")


def origin_text(operator: str) -> str:
    """'compiled by torch for an eager torch.cond call'."""
    return f"compiled by torch for an eager {operator} call"
