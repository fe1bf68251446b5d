"""Reports where CI users look: JUnit XML (one testcase per `check`), SARIF 2.1.0 (graph breaks and
recompiles as results at the user's source lines, so code scanning annotates a pull request), and
Markdown for a pull-request comment. All three are built from the summary JSON, nothing recomputed."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

from inspector import __version__

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


def junit_xml(checks, source: str) -> str:
    """One `<testcase>` per check; a failed check carries its reason as the failure message, an
    inconclusive one (the timing cannot tell) is skipped with its reason, neither passed nor failed."""
    failures = sum(check.passed is False for check in checks)
    skipped = sum(check.passed is None for check in checks)
    suites = ET.Element("testsuites", name="compile-inspector check", tests=str(len(checks)), failures=str(failures))
    suite = ET.SubElement(suites, "testsuite", name="compile-inspector check", tests=str(len(checks)),
                          failures=str(failures), errors="0", skipped=str(skipped))
    ET.SubElement(ET.SubElement(suite, "properties"), "property", name="session", value=source)
    for check in checks:
        case = ET.SubElement(suite, "testcase", classname="compile_inspector.check", name=check.name)
        if check.passed:
            ET.SubElement(case, "system-out").text = check.reason
        elif check.passed is None:
            ET.SubElement(case, "skipped", message=f"INCONCLUSIVE: {check.reason}")
        else:
            ET.SubElement(case, "failure", message=check.reason, type="CheckFailed").text = f"{check.name}: {check.reason}"
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def sarif_log(summary: dict, source_root: Path | None = None) -> dict:
    """SARIF 2.1.0: one result per break site, per recompile group and per export issue, at the user's line."""
    root = (source_root or Path.cwd()).resolve()
    rules: dict[str, dict] = {}
    results = []
    for site in summary["break_types"]["sites"]:
        kind = site["type"]
        rule_id = f"graph-break/{kind['gb_id']}" if kind else "graph-break/unknown"
        if rule_id not in rules:
            rules[rule_id] = _break_rule(rule_id, kind)
        message = f"Graph break ×{site['count']}: {site['reason']}"
        if kind:
            message += f" ({kind['gb_id']}: {kind['gb_type']}). " + " ".join(kind["hints"][:2])
        results.append(_result(rule_id, "warning", message.strip(), site["file"], site["line"], root))
    for group in summary["recompile_groups"]:
        rule_id = f"recompile/{group['aspect'].split(' dim')[0].replace(' ', '-')}"
        if rule_id not in rules:
            rules[rule_id] = {"id": rule_id, "name": "Recompile",
                              "shortDescription": {"text": f"Recompile: a guard on {group['aspect']} failed"},
                              "helpUri": "https://docs.pytorch.org/docs/stable/torch.compiler_troubleshooting.html",
                              "help": {"text": summary["recompile_limit"]["text"]}}
        message = (f"Recompiled ×{group['count']} ({group['function'] or '?'}): {group['shown_subject']} {group['aspect']}"
                   + (f" {' → '.join(group['history'])}" if group["history"] else "")
                   + f". {group['diagnosis']} Fix: {group['fix']} {group['stance']}")
        results.append(_result(rule_id, "warning" if group["count"] > 1 else "note", message,
                               group["file"], group["line"], root))
    for issue in summary["export_issues"]:
        rule_id = f"export/{issue['kind']}"
        rules.setdefault(rule_id, {"id": rule_id, "name": "ExportIssue",
                                   "shortDescription": {"text": f"torch.export: {issue['kind'].replace('_', ' ')}"},
                                   "helpUri": "https://docs.pytorch.org/docs/stable/export.html"})
        results.append(_result(rule_id, "warning", f"{issue['what']}. Fix: {issue['fix']}", issue["file"], issue["line"], root))
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


def _break_rule(rule_id: str, kind: dict | None) -> dict:
    if kind is None:
        return {"id": rule_id, "name": "GraphBreak", "shortDescription": {"text": "Graph break of an unidentified type"}}
    text = "\n".join([kind["explanation"], *(f"Hint: {hint}" for hint in kind["hints"])]).strip()
    rule = {"id": rule_id, "name": "GraphBreak", "shortDescription": {"text": f"{kind['gb_id']}: {kind['gb_type']}"},
            "helpUri": kind["url"]}
    if text:
        rule["fullDescription"] = {"text": kind["explanation"] or kind["gb_type"]}
        rule["help"] = {"text": text}
    return rule


def _result(rule_id: str, level: str, message: str, file: str | None, line: int | None, root: Path) -> dict:
    result = {"ruleId": rule_id, "level": level, "message": {"text": message}}
    if file:
        physical: dict = {"artifactLocation": _artifact(file, root)}
        if line:
            physical["region"] = {"startLine": int(line)}
        result["locations"] = [{"physicalLocation": physical}]
    return result


def _artifact(file: str, root: Path) -> dict:
    """A path under the source root as a repository-relative URI (what code scanning matches)."""
    path = Path(file)
    try:
        relative = path.resolve().relative_to(root)
    except (ValueError, OSError):
        return {"uri": path.as_uri() if path.is_absolute() else file.replace(os.sep, "/")}
    return {"uri": relative.as_posix(), "uriBaseId": "SRCROOT"}


def markdown(summary: dict, headline: str) -> str:
    """A pull-request comment: the verdict, break types, recompile causes and where the time goes."""
    out = [f"### torch.compile Inspector: {Path(summary['source']).name}", "", headline, ""]
    out += [f"> **Attention:** {_cell(notice['text'])}" for notice in summary["notices"]]
    out += [""] if summary["notices"] else []
    figures = {figure["key"]: figure for figure in summary["verdict"]}
    rows = [(figures[key]["label"], _value(figures[key])) for key in ("speedup", "t_compile", "t_execute", "break_even")
            if key in figures]
    out += ["| figure | value |", "| --- | --- |", *[f"| {label} | {value} |" for label, value in rows], ""]
    issues = summary["export_issues"]
    if issues:
        out += [f"**Export issues:** {len(issues)}", "", "| where | kind | expression | fix |", "| --- | --- | --- | --- |"]
        out += [f"| `{_where(issue['file'], issue['line'], issue['location'] or '?')}` | {issue['kind']} | "
                f"{_cell(issue['expression'])} | {_cell(issue['fix'])} |" for issue in issues]
        out.append("")
    sites = summary["break_types"]["sites"]
    out.append(f"**Graph breaks:** {sum(site['count'] for site in sites)} at {len(sites)} site(s)")
    if sites:
        out += ["", "| where | type | count | what to do |", "| --- | --- | --- | --- |"]
        for site in sites:
            kind = site["type"]
            name = f"[{kind['gb_id']}]({kind['url']}) {kind['gb_type']}" if kind else site["reason"]
            hint = kind["hints"][0] if kind and kind["hints"] else ""
            out.append(f"| `{_where(site['file'], site['line'], site['location'])}` | {_cell(name)} | {site['count']} | {_cell(hint)} |")
    groups = summary["recompile_groups"]
    out += ["", f"**Recompiles:** {sum(group['count'] for group in groups)} in {len(groups)} group(s)"]
    if groups:
        out += ["", "| frame | guarded value | count | values | fix |", "| --- | --- | --- | --- | --- |"]
        for group in groups:
            out.append(f"| `{group['function'] or '?'}` | `{group['shown_subject']}` {group['aspect']} | {group['count']} | "
                       f"{' → '.join(group['history'])} | {_cell(group['fix'])} |")
        out += ["", groups[0]["stance"]]
    out += ["", f"_{summary['recompile_limit']['text']}_"]
    slow = summary["slowness"]
    if slow["call_us"] is not None:
        out += ["", f"**Where a compiled call's time goes** ({slow['call_us']:.1f} µs per profiled call):", "",
                "| part | µs/call | share |", "| --- | --- | --- |"]
        out += [f"| {cost['label']} | {cost['us_per_call']:.1f} | {cost['share']:.0%} |" for cost in slow["costs"]]
    if slow["cudagraph_skips"]:
        out += ["", "**CUDA graphs skipped:** " + "; ".join(f"{s['compile_id']}: {_cell(s['reason'])}"
                                                         for s in slow["cudagraph_skips"])]
    return "\n".join(out) + "\n"


def _value(figure: dict) -> str:
    value = figure["value"]
    return "—" if value is None else f"{value:.4g} {figure['unit']}".strip()


def _where(file: str | None, line: int | None, fallback: str) -> str:
    return f"{Path(file).name}:{line}" if file else fallback


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")
