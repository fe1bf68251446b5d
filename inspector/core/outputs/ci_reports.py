"""Reports where CI users look: JUnit XML (one testcase per `check`), SARIF 2.1.0 (graph breaks and
recompiles as results at the user's source lines, so code scanning annotates a pull request), and
Markdown for a pull-request comment. SARIF and Markdown render the typed summary model, nothing recomputed.

Everything in them may quote a log, and a log is anybody's text: XML gets no character it forbids
(a control character in a path would make the JUnit file unreadable), SARIF only line numbers ≥ 1,
and Markdown — posted where others click — no live link, image, HTML or broken table cell."""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from inspector import __version__
from inspector.core.analysis.break_types import BreakTypeMatch
from inspector.core.analysis.verdict import Figure
from inspector.core.outputs.plain_text import show_controls
from inspector.core.outputs.summary_model import Part, Summary, as_summary

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


def junit_xml(checks, source: str) -> str:
    """One `<testcase>` per check; a failed check carries its reason as the failure message, an
    inconclusive one (the timing cannot tell) is skipped with its reason, neither passed nor failed."""
    failures = sum(check.passed is False for check in checks)
    skipped = sum(check.passed is None for check in checks)
    source = show_controls(source)  # XML allows none of what show_controls escapes but tab and newline
    suites = ET.Element("testsuites", name="compile-inspector check", tests=str(len(checks)), failures=str(failures))
    suite = ET.SubElement(suites, "testsuite", name="compile-inspector check", tests=str(len(checks)),
                          failures=str(failures), errors="0", skipped=str(skipped))
    ET.SubElement(ET.SubElement(suite, "properties"), "property", name="session", value=source)
    for check in checks:
        name, reason = show_controls(check.name), show_controls(check.reason)
        case = ET.SubElement(suite, "testcase", classname="compile_inspector.check", name=name)
        if check.passed:
            ET.SubElement(case, "system-out").text = reason
        elif check.passed is None:
            ET.SubElement(case, "skipped", message=f"INCONCLUSIVE: {reason}")
        else:
            ET.SubElement(case, "failure", message=reason, type="CheckFailed").text = f"{name}: {reason}"
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def sarif_log(subject: Summary | dict, source_root: Path | None = None) -> dict:
    """SARIF 2.1.0: one result per break site, per recompile group and per export issue, at the user's line."""
    summary = as_summary(subject)
    root = (source_root or Path.cwd()).resolve()
    rules: dict[str, dict] = {}
    results = []
    for site in summary.break_types.sites:
        kind = site.type
        rule_id = f"graph-break/{kind.gb_id}" if kind else "graph-break/unknown"
        if rule_id not in rules:
            rules[rule_id] = _break_rule(rule_id, kind)
        message = f"Graph break ×{site.count}: {site.reason}"
        if kind:
            message += f" ({kind.gb_id}: {kind.gb_type}). " + " ".join(kind.hints[:2])
        results.append(_result(rule_id, "warning", message.strip(), site.file, site.line, root))
    for group in summary.recompile_groups:
        rule_id = f"recompile/{group.aspect.split(' dim')[0].replace(' ', '-')}"
        if rule_id not in rules:
            rules[rule_id] = {"id": rule_id, "name": "Recompile",
                              "shortDescription": {"text": f"Recompile: a guard on {group.aspect} failed"},
                              "helpUri": "https://docs.pytorch.org/docs/stable/torch.compiler_troubleshooting.html",
                              "help": {"text": summary.recompile_limit.text}}
        message = (f"Recompiled ×{group.count} ({group.shown}): {group.shown_subject} {group.aspect}"
                   + (f" {' → '.join(group.history)}" if group.history else "")
                   + f". {group.diagnosis} Fix: {group.fix} {group.stance}")
        results.append(_result(rule_id, "warning" if group.count > 1 else "note", message,
                               group.file, group.line, root))
    for issue in summary.export_issues:
        rule_id = f"export/{issue.kind}"
        rules.setdefault(rule_id, {"id": rule_id, "name": "ExportIssue",
                                   "shortDescription": {"text": f"torch.export: {issue.kind.replace('_', ' ')}"},
                                   "helpUri": "https://docs.pytorch.org/docs/stable/export.html"})
        results.append(_result(rule_id, "warning", f"{issue.what}. Fix: {issue.fix}", issue.file, issue.line, root))
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "torch-compile-inspector", "version": __version__,
                                "rules": list(rules.values())}},
            "originalUriBaseIds": {"SRCROOT": {"uri": root.as_uri() + "/"}},
            "results": results,
        }],
    }


def _break_rule(rule_id: str, kind: BreakTypeMatch | None) -> dict:
    if kind is None:
        return {"id": rule_id, "name": "GraphBreak",
                "shortDescription": {"text": "Graph break of an unidentified type"}}
    text = "\n".join([kind.explanation, *(f"Hint: {hint}" for hint in kind.hints)]).strip()
    rule = {"id": rule_id, "name": "GraphBreak", "shortDescription": {"text": f"{kind.gb_id}: {kind.gb_type}"},
            "helpUri": kind.url}
    if text:
        rule["fullDescription"] = {"text": kind.explanation or kind.gb_type}
        rule["help"] = {"text": text}
    return rule


def _result(rule_id: str, level: str, message: str, file: str | None, line: int | None, root: Path) -> dict:
    result = {"ruleId": rule_id, "level": level, "message": {"text": message}}
    if file and isinstance(file, str):
        physical: dict = {"artifactLocation": _artifact(file, root)}
        start = _line_number(line)
        if start is not None:
            physical["region"] = {"startLine": start}
        result["locations"] = [{"physicalLocation": physical}]
    return result


def _line_number(value) -> int | None:
    """A line number SARIF accepts (an integer ≥ 1), or None: the result is then placed on the file
    alone (a log can say `co_firstlineno: "abc"`, `1e400`, `[1]` or `-5`)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = int(value) if not isinstance(value, float) or value.is_integer() else None
    except (ValueError, OverflowError):
        return None
    return number if number is not None and number >= 1 else None


def _artifact(file: str, root: Path) -> dict:
    """A path under the source root as a repository-relative URI (what code scanning matches)."""
    path = Path(file)
    try:
        relative = path.resolve().relative_to(root)
    except (ValueError, OSError):
        return {"uri": path.as_uri() if path.is_absolute() else file.replace(os.sep, "/")}
    return {"uri": relative.as_posix(), "uriBaseId": "SRCROOT"}


def markdown(subject: Summary | dict) -> str:
    """A pull-request comment: the verdict, break types, recompile causes and where the time goes."""
    summary = as_summary(subject)
    out = [f"### torch.compile Inspector: {_text(Path(summary.source).name)}", "", _text(summary.headline), ""]
    out += [f"> **Attention:** {_prose(notice.text)}" for notice in summary.notices]
    out += [""] if summary.notices else []
    rows = [(figure.label, _value(figure)) for key in ("speedup", "t_compile", "t_execute", "break_even")
            if (figure := summary.figure(key)) is not None]
    out += ["| figure | value |", "| --- | --- |", *[f"| {label} | {value} |" for label, value in rows], ""]
    issues = summary.export_issues
    if issues:
        out += [_bold_heading(summary, Part.EXPORT_ISSUES), "", "| where | kind | expression | fix |",
                "| --- | --- | --- | --- |"]
        out += [f"| {_code(_where(issue.file, issue.line, issue.location or '?'))} | {_text(issue.kind)} | "
                f"{_text(issue.expression)} | {_prose(issue.fix)} |" for issue in issues]
        out.append("")
    sites = summary.break_types.sites
    out.append(_bold_heading(summary, Part.BREAKS))
    if sites:
        out += ["", "| where | type | count | what to do |", "| --- | --- | --- | --- |"]
        for site in sites:
            kind = site.type
            name = f"{_link(kind.gb_id, kind.url)} {_text(kind.gb_type)}" if kind else _text(site.reason)
            hint = kind.hints[0] if kind and kind.hints else ""
            out.append(f"| {_code(_where(site.file, site.line, site.location))} | {name} | {site.count} | "
                       f"{_prose(hint)} |")
    groups = summary.recompile_groups
    out += ["", _bold_heading(summary, Part.RECOMPILE_GROUPS)]
    if groups:
        ranked = any(group.rank is not None for group in groups)  # rank 1's `kernel` and rank 3's are two groups
        out += ["", "| " + ("rank | " if ranked else "") + "frame | guarded value | count | values | fix |",
                "|" + " --- |" * (6 if ranked else 5)]
        for group in groups:
            out.append("| " + (f"{group.rank} | " if ranked else "") + f"{_code(group.shown)} | "
                       f"{_code(group.shown_subject)} {_text(group.aspect)} | "
                       f"{group.count} | {_text(' → '.join(group.history))} | {_prose(group.fix)} |")
        out += ["", _prose(groups[0].stance)]
    out += ["", f"_{_prose(summary.recompile_limit.text)}_"]
    slow = summary.slowness
    if slow.call_us is not None:
        out += ["", f"**Where a compiled call's time goes** ({slow.call_us:.1f} µs per profiled call):", "",
                "| part | µs/call | share |", "| --- | --- | --- |"]
        out += [f"| {_text(cost.label)} | {cost.us_per_call:.1f} | {cost.share:.0%} |" for cost in slow.costs]
    if slow.cudagraph_skips:
        out += ["", "**CUDA graphs skipped:** " + "; ".join(f"{_text(s.compile_id)}: {_text(s.reason)}"
                                                         for s in slow.cudagraph_skips)]
    return "\n".join(out) + "\n"


def _bold_heading(summary: Summary, part: Part) -> str:
    section = summary.section(part)
    return f"**{section.title}:** {section.figure}"


def _value(figure: Figure) -> str:
    return "—" if figure.value is None else f"{figure.value:.4g} {figure.unit}".strip()


def _where(file: str | None, line: int | None, fallback: str) -> str:
    return f"{Path(file).name}:{line}" if file else fallback


# The characters that open Markdown markup anywhere in a line (links and images need `[`, HTML `<`,
# entities `&`, code a backtick, emphasis `*`, a table cell ends at `|`), and those that do at its start
# (a heading, a quote, a list). Underscores only emphasise at word edges, so file names keep theirs.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*\[\]<>|&~]|\b_|_\b|^[#>+=-])")


def _text(text: object) -> str:
    """Log text as plain Markdown text, safe in a table cell too: every character Markdown gives a
    meaning is escaped (so a break reason cannot post a link, an image or HTML, or end a cell), newlines
    become spaces and controls are shown as escapes."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", show_controls(str(text))).replace("\n", " ")


def _prose(text: object) -> str:
    """Our own advice (a fix, a hint) that quotes code between backticks: each quote stays a code span,
    the rest is escaped as `_text`. A backtick smuggled in from a log can only shift which parts are
    code, never let markup through."""
    parts = str(text).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: the last one opens nothing
        parts[-2:] = [parts[-2] + "`" + parts[-1]]
    return "".join(_code(part) if index % 2 else _text(part) for index, part in enumerate(parts))


def _code(text: object) -> str:
    """`text` as a code span inside a table cell: fenced by more backticks than any run inside it
    (so a backtick in a file name cannot close it early), pipes escaped as GitHub tables need."""
    text = show_controls(str(text)).replace("\n", " ").replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _link(label: object, url: object) -> str:
    """A link only to an https address (anything else — `javascript:`, `data:` — is shown as text)."""
    if not (isinstance(url, str) and url.startswith("https://") and not re.search(r"[\s<>()\\\[\]`|]", url)):
        return _text(label)
    return f"[{_text(label)}]({url})"
