"""The export report (draft export's, tlparse -e's): each issue torch.export met and worked around,
at the user's line, in the user's names (the local that holds a symbol instead of `u1`), with what
to do about it — the fix differs by kind: assert a data-dependent assumption, write a fake kernel,
correct one, free a dynamic dim a guard specialised."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from inspector.core.analysis.shapes import user_source
from inspector.core.model.records import Record, live
from inspector.core.model.session import CompileUnit, ExportIssue, Session
from inspector.core.model.source_location import SourceLocation

KINDS = {"data_dependent": "data-dependent expression", "missing_fake_kernel": "missing fake kernel",
         "mismatched_fake_kernel": "mismatched fake kernel", "guard_added": "guard added"}
_RELATIONS = {"Eq": "==", "Ne": "!=", "Lt": "<", "Le": "<=", "Gt": ">", "Ge": ">="}
_RELATION = re.compile(r"(Eq|Ne|Lt|Le|Gt|Ge)\((.*)\)")


@dataclass(frozen=True)
class ExportFinding(Record):
    """An issue torch.export met, at the user's line, in the user's names, with what to do about it."""

    kind: str
    subject: str  # the expression or op as torch names it
    expression: str  # the subject in the user's names where the log gives them
    rank: int | None
    location: str | None  # the user's line, as text
    file: str | None
    line: int | None
    code: str | None
    count: int
    assumed: str | None  # what export assumed the expression was
    sources: Mapping[str, str]  # symbol → the input it stands for
    what: str  # the issue in words
    fix: str
    issue: ExportIssue | None = live(None)  # the issue as the log holds it (a finding read back from a summary: None)

    @property
    def title(self) -> str:
        return f"{KINDS.get(self.kind, self.kind)}: {self.expression}"


def _made(issue: ExportIssue, rank: int | None, expression: str, what: str, fix: str) -> ExportFinding:
    at = issue.location
    return ExportFinding(issue.kind, issue.subject, expression, rank, str(at) if at else None, at.file if at else None,
                         at.line if at else None, at.code if at else None, issue.count, issue.result, issue.sources,
                         what, fix, issue=issue)


def export_findings(session: Session) -> list[ExportFinding]:
    findings = []
    for unit in session.units:
        callers: dict | None = None  # made once per unit, when an issue needs placing
        for issue in unit.export_issues:
            if issue.location is None and callers is None:
                callers = _op_callers(unit)
            findings.append(_finding(_located(issue, callers or {}), unit.rank))
    return findings


def _op_callers(unit: CompileUnit) -> dict:
    """Each op of the unit's exported program → its first node that carries the user's line: one pass
    over the graph for all of a unit's issues (an exported program may hold hundreds of thousands of nodes)."""
    graph = unit.graphs.get("exported_program")
    callers: dict = {}
    for node in graph.graph.nodes if graph is not None else ():
        if node.source and isinstance(node.target, str):
            callers.setdefault(node.target, node)
    return callers


def _located(issue: ExportIssue, callers: dict) -> ExportIssue:
    """A fake-kernel issue names only its op: place it at the user's line that calls the op, from the
    exported program's graph (its node for the op carries the line)."""
    if issue.location is not None:
        return issue
    node = callers.get(issue.subject)
    if node is None:
        return issue
    source = node.source
    return replace(issue, location=SourceLocation(source.file, source.line, source.function, source.code))


def _finding(issue: ExportIssue, rank: int | None) -> ExportFinding:
    where = f" at {issue.location}" if issue.location else ""
    if issue.kind == "data_dependent":
        expression = _in_user_names(issue.subject, issue.names)
        check = expression if issue.result in (None, "True") else f"not ({expression})"
        return _made(issue, rank, expression,
                             f"export could not evaluate `{expression}` (`{issue.subject}`){where}: it depends on a "
                             f"tensor's data, so export assumed {issue.result or 'a value'} and asserts it in the "
                             f"graph (met {issue.count}×)",
                             f"state the assumption before that line: `torch._check({check})`, or write the branch "
                             "with `torch.cond` if both outcomes occur")
    if issue.kind == "guard_added":
        expression = _as_python(re.sub(r"\b[su]\d+\b", lambda m: user_source(issue.sources.get(m[0], m[0])),
                                       issue.subject))
        inputs = " and ".join(sorted({user_source(source) for source in issue.sources.values()})) or "an input's size"
        return _made(issue, rank, expression,
                             f"export added the guard `{expression}` (`{issue.subject}`){where}: {inputs} was traced "
                             f"as dynamic, but this line made the exported program valid only where the guard holds — "
                             f"the dim is specialised or restricted (met {issue.count}×)",
                             f"if {inputs} really varies, keep the branch on it out of the traced code (or write it "
                             f"with `torch.cond`); if not, mark it `Dim.AUTO` so export infers what stays dynamic, or "
                             "give its `Dim` the range the guard implies")
    op = issue.subject
    if issue.kind == "missing_fake_kernel":
        return _made(issue, rank, op, f"torch.ops.{op} has no fake kernel{where}: export cannot trace through it "
                                              "without running it on real data",
                             f"register one: `@torch.library.register_fake(\"{_qualified(op)}\")` returning "
                             "empty tensors of the output's shape and dtype")
    return _made(issue, rank, op, f"the fake kernel of torch.ops.{op} disagrees with the real one{where}"
                                          + (f": {issue.reason}" if issue.reason else ""),
                         "correct the fake kernel's output shapes, strides and dtypes to match the real kernel")


def _in_user_names(expression: str, names: dict[str, list[str]]) -> str:
    """`u1 > 2` with each symbol replaced by the local that held it (`m > 2`), where unambiguous."""
    holder: dict[str, str] = {}
    for name, symbols in names.items():
        if len(symbols) == 1:
            holder.setdefault(symbols[0], name)
    if not holder:
        return expression
    return re.sub(r"\b[A-Za-z_]\w*\b", lambda match: holder.get(match[0], match[0]), expression)


def _as_python(expression: str) -> str:
    """`Eq(x.shape[0], 3)` → `x.shape[0] == 3`: a relation as the user's code writes it (left as it is
    when its two sides cannot be told apart at one top-level comma)."""
    match = _RELATION.fullmatch(expression)
    if not match:
        return expression
    depth, commas = 0, []
    for index, char in enumerate(match[2]):
        depth += char in "([{"
        depth -= char in ")]}"
        if char == "," and depth == 0:
            commas.append(index)
    if len(commas) != 1 or depth:
        return expression
    left, right = match[2][:commas[0]].strip(), match[2][commas[0] + 1:].strip()
    return f"{left} {_RELATIONS[match[1]]} {right}"


def _qualified(op: str) -> str:
    """`tci.triple.default` (as the log names an overload) → `tci::triple` (as torch.library wants it)."""
    namespace, _, rest = op.partition(".")
    return f"{namespace}::{rest.split('.', 1)[0]}" if rest else op
