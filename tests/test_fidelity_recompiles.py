"""Recompiles of code nobody here wrote, against torch's own account of the same run (TORCH_LOGS=
recompiles,dynamic and its counters): one group per cause with the values it took, advice in the
user's names (or plainly in Dynamo's), the fix chosen by the cause, and automatic dynamic stated from
the log's create_symbol record."""

from __future__ import annotations

import inspect
import re
import shutil

import pytest

from conftest import SCENARIOS, run_traced
from inspector.core.analysis.recompile_groups import recompile_groups
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.outputs.summary import summarize
from inspector.core.outputs.summary_text import render_text
from inspector.core.readers.session_loader import open_path

_RECOMPILING = re.compile(r"\[(?P<id>\d+/\d+)\] \[__recompiles\] Recompiling function (?P<fn>\S+) in ")
_GUARD = re.compile(r"\[(?P<id>\d+/\d+)\] \[__recompiles\]\s+- (?P<against>\d+/\d+): (?P<guard>.+)$")
_SIZE = re.compile(r"tensor '(?P<name>.+?)' size mismatch at index (?P<dim>\d+)\. "
                   r"expected (?P<old>\d+), actual (?P<new>\d+)")
_CREATE_SYMBOL = re.compile(r"\[(?P<id>\d+/\d+)\] create_symbol (?P<symbol>s\d+) = \S+ for (?P<source>\S+)")


def torch_recompiles(torch_logs: str) -> list[tuple[str, str, str]]:
    """(compile id, function, first failed guard) per recompile, in torch's words."""
    functions, first = {}, {}
    for line in torch_logs.splitlines():
        if started := _RECOMPILING.search(line):
            functions[started["id"]] = started["fn"]
        elif (guard := _GUARD.search(line)) and guard["id"] not in first:
            first[guard["id"]] = guard["guard"].strip()
    return [(compile_id, function, first.get(compile_id, "")) for compile_id, function in functions.items()]


def torch_guards(torch_logs: str) -> set[tuple[str, str]]:
    """Every failed guard torch listed: (compile id, 'against: guard')."""
    return {(f"[{m['id']}]", f"{m['against']}: {m['guard'].strip()}")
            for m in map(_GUARD.search, torch_logs.splitlines()) if m}


def torch_symbols(torch_logs: str) -> dict[str, tuple[str, str]]:
    """source → (compile id, symbol) of every create_symbol torch logged."""
    return {m["source"]: (m["id"], m["symbol"]) for m in map(_CREATE_SYMBOL.search, torch_logs.splitlines()) if m}


@pytest.fixture(scope="module")
def traced(tmp_path_factory, inductor_cache):
    """Each scenario traced once for this module, with torch's create_symbol lines in its log."""
    runs = {}

    def run(name: str, **env: str):
        key = (name, *sorted(env.items()))
        if key not in runs:
            runs[key] = run_traced(SCENARIOS / f"fidelity_recompile_{name}.py", tmp_path_factory.mktemp(name),
                                   inductor_cache, extra_env={"TORCH_LOGS": "graph_breaks,recompiles,dynamic", **env})
        return runs[key]

    return run


def test_inputs_behind_args_wrappers_are_named_as_the_user_wrote_them(traced):
    transformers = pytest.importorskip("transformers")
    run = traced("wrapper")
    logged = torch_recompiles(run.torch_logs)
    assert [(function, _SIZE.search(guard).group("name", "dim", "old", "new")) for _, function, guard in logged] == [
        ("wrapper", ("args[0]", "1", "8", "16")), ("wrapper", ("args[0]", "0", "4", "6"))]
    groups = recompile_groups(open_path(run.trace_dir))
    assert [(g.subject, g.aspect, g.history) for g in groups] == [("args[0]", "size dim 1", ["8", "16"]),
                                                                   ("args[0]", "size dim 0", ["4", "6"])]
    gpt2, pair = groups
    # the value behind args[0] is the first parameter of GPT-2's forward after self
    parameter = list(inspect.signature(transformers.GPT2Model.forward).parameters)[1]
    assert parameter == "input_ids"
    assert gpt2.diagnosis.startswith("`input_ids` (Dynamo calls it `args[0]`: the 1st value wrapper() at generic.py:")
    assert "torch._dynamo.mark_dynamic(input_ids, 1)" in gpt2.fix and "args[0]" not in gpt2.fix
    # where the graph does not show the name, the advice says the name is Dynamo's and what it stands for
    assert "`args[0]` (Dynamo's name, not one in your code: the 1st value wrapper() at fidelity_recompile_wrapper.py:" \
        in pair.diagnosis
    assert "mark_dynamic(args[0]" not in pair.fix and "on the tensor Dynamo calls `args[0]`" in pair.fix
    symbols = torch_symbols(run.torch_logs)
    compile_id, symbol = symbols["L['args'][0].size()[1]"]
    assert f"The recompile [{compile_id}] made `input_ids` dim 1 symbolic ({symbol})" in gpt2.diagnosis
    text = render_text(summarize(SessionAnalysis(open_path(run.trace_dir))))
    assert "fix: Mark the dim dynamic before the first call: `torch._dynamo.mark_dynamic(input_ids, 1)`" in text


def test_a_model_compiled_through_a_library_decorator_is_named_by_its_forward(traced):
    """transformers decorates GPT-2's forward, so Dynamo compiles the decorator's `wrapper`
    (transformers/utils/generic.py): the unit is listed as the model's `forward` at its own line, via
    the wrapper; the user's own decorator (`logged`) is the user's code and keeps its name."""
    pytest.importorskip("transformers")
    session = open_path(traced("wrapper").trace_dir)
    summary = summarize(session)
    by_wrapper = {unit["location"].rpartition("/")[2]: unit for unit in summary["units"]}
    gpt2 = next(unit for where, unit in by_wrapper.items() if where.startswith("generic.py:"))
    assert gpt2["function"] == "wrapper" and gpt2["called"]["function"] == "forward"
    assert "/transformers/models/gpt2/modeling_gpt2.py:" in gpt2["called"]["location"]
    pair = next(unit for where, unit in by_wrapper.items() if where.startswith("fidelity_recompile_wrapper.py:"))
    assert pair["function"] == "wrapper" and pair["called"] is None
    line = next(line for line in render_text(summary).splitlines() if line.strip().startswith(gpt2["compile_id"]))
    assert "forward (via wrapper)" in line and "modeling_gpt2.py:" in line, line


def test_a_data_dependent_size_gets_the_fix_for_data_dependent_sizes(traced):
    run = traced("data_dependent")
    assert any(key.startswith("Dynamic shape operator") for key in run.counters["graph_break"])
    [(_, function, guard)] = torch_recompiles(run.torch_logs)
    assert function == "torch_dynamo_resume_in_pick_positive_at_8"
    name, old, new = _SIZE.search(guard).group("name", "old", "new")
    [group] = recompile_groups(open_path(run.trace_dir))
    assert (group.function, group.subject, group.history) == (function, name, [old, new])
    assert (name, old, new) == ("___stack0", "3", "5")
    assert group.diagnosis.startswith("`rows` (Dynamo's `___stack0`) got a new size in dim 0 (3 → 5), a size that "
                                      "depends on the data: it is the result of `rows = torch.nonzero(x > 0)`")
    assert "capture_dynamic_output_shape_ops = True" in group.fix and "torch._check(rows.shape[0]" in group.fix
    assert "___stack0" not in group.fix and "Padding" not in group.fix and "dynamic=True" not in group.fix


def test_a_python_value_with_guard_comments_is_one_group_with_its_history(traced):
    run = traced("python_value")
    logged = torch_recompiles(run.torch_logs)
    script = (SCENARIOS / "fidelity_recompile_python_value.py").read_text().splitlines()
    line = next(number for number, code in enumerate(script, 1) if "depth = len(inspect.stack())" in code)
    assert [function for _, function, _ in logged] == [f"torch_dynamo_resume_in_forward_at_{line}"] * 2 + ["repeat"]
    assert all("# depth = len(inspect.stack())" in guard for _, _, guard in logged[:2])
    depths = re.search(r"depths seen by the compiled code: (.+)", run.torch_logs)[1].split()
    session = open_path(run.trace_dir)
    # torch's guards as it logged them: its comments kept, the user stack trace after them not glued on
    assert {(str(r.compile_id), f"{g.against}: {g.guard}") for r in session.recompiles for g in r.failed_guards} \
        == torch_guards(run.torch_logs)
    group, times = recompile_groups(session)
    assert (group.subject, group.aspect, group.count) == ("len(___stack1)", "value", 2)
    assert group.history == depths  # what each of the three compiles was specialised on
    assert "The graph was specialised on the length `len(inspect.stack())` (Dynamo calls it `len(___stack1)`" \
        in group.diagnosis
    assert "pass it in as a tensor" in group.fix and "mark_dynamic" not in group.fix
    # the int argument: one recompile, after which torch's create_symbol made it symbolic
    assert logged[2][2].startswith("times == 2")
    compile_id, symbol = torch_symbols(run.torch_logs)["L['times']"]
    made = re.search(r"create_symbol \S+ = (?P<value>\S+) for L\['times'\]", run.torch_logs)["value"]
    assert (times.subject, times.aspect, times.history) == ("times", "value", ["2", made])  # the value it changed to
    assert f"The recompile [{compile_id}] made `times` symbolic ({symbol}): automatic dynamic" in times.diagnosis


def test_automatic_dynamic_is_stated_from_the_create_symbol_record(traced, tmp_path):
    run = traced("automatic_dynamic")
    [(compile_id, _, guard)] = torch_recompiles(run.torch_logs)
    symbol = torch_symbols(run.torch_logs)["L['x'].size()[0]"]
    assert symbol[0] == compile_id
    [group] = recompile_groups(open_path(run.trace_dir))
    assert group.history == list(_SIZE.search(guard).group("old", "new"))
    assert f"The recompile [{compile_id}] made `x` dim 0 symbolic ({symbol[1]}): automatic dynamic" in group.diagnosis
    assert "usually" not in group.diagnosis
    # the same log without its create_symbol records: the hedge, not a fact the log does not hold
    stripped = tmp_path / "trace"
    shutil.copytree(run.trace_dir, stripped)
    for log in stripped.glob("*.log"):
        log.write_text("".join(line for line in log.read_text().splitlines(keepends=True)
                               if '{"create_symbol"' not in line))
    [hedged] = recompile_groups(open_path(stripped))
    assert "Dynamo usually makes the dim symbolic" in hedged.diagnosis and "symbolic (s" not in hedged.diagnosis


def test_functions_sharing_a_wrapper_frame_are_one_cause_with_the_fix_for_it(traced):
    run = traced("shared_wrapper")
    logged = torch_recompiles(run.torch_logs)
    assert [function for _, function, _ in logged] == ["wrapper", "wrapper"]
    pinned = {re.search(r"___check_obj_id\((fn\.__code__), (\d+)\)", guard).groups() for _, _, guard in logged}
    assert len(pinned) == 2 and {name for name, _ in pinned} == {"fn.__code__"}  # one guard, two code objects
    [group] = recompile_groups(open_path(run.trace_dir))
    assert (group.subject, group.aspect, group.count) == ("fn.__code__", "object identity", 2)
    assert "wrapper() ran with a different `fn` (2 times)" in group.diagnosis
    assert "share its recompile limit" in group.diagnosis and "`torch.compile(fn)` inside the decorator" in group.fix


def test_keyword_inputs_and_module_buffers_get_advice_that_torch_confirms(traced):
    run = traced("keywords")
    logged = torch_recompiles(run.torch_logs)
    names = [_SIZE.search(guard).group("name", "old", "new") for _, _, guard in logged]
    assert names == [("kwargs['batch']", "4", "6"), ("self._modules['store']._buffers['keys']", "2", "3"),
                     ("self._modules['store']._buffers['keys']", "3", "4")]
    groups = {group.subject: group for group in recompile_groups(open_path(run.trace_dir))}
    batch, keys = groups["kwargs['batch']"], groups["self._modules['store']._buffers['keys']"]
    assert (batch.count, batch.history, keys.count, keys.history) == (1, ["4", "6"], 2, ["2", "3", "4"])
    assert batch.diagnosis.startswith("`batch` (Dynamo calls it `kwargs['batch']`: the keyword argument `batch`")
    assert keys.diagnosis.startswith("`self.store.keys` (Dynamo calls it `self._modules['store']._buffers['keys']`")
    assert "`torch._dynamo.mark_dynamic(batch, 0)`" in batch.fix
    for setting in ("torch._dynamo.config.force_parameter_static_shapes = False",
                    "torch._dynamo.config.force_nn_module_property_static_shapes = False",
                    "torch._dynamo.mark_dynamic(self.store.keys, 0)"):
        assert setting in keys.fix
    # the scenario with exactly that advice applied: torch compiles each frame once
    fixed = traced("keywords", APPLY_FIX="1")
    assert torch_recompiles(fixed.torch_logs) == [] and fixed.counters["stats"]["unique_graphs"] == 2


def test_the_session_tree_lists_the_wrapped_forward_with_the_wrapper_in_its_tooltip(traced, qtbot, window):
    pytest.importorskip("transformers")
    from conftest import open_and_wait
    from inspector.gui.views.qt_navigator import UNIT_ROLE

    open_and_wait(qtbot, window, traced("wrapper").trace_dir)
    tree = window.navigator
    frames = [tree.topLevelItem(index) for index in range(tree.topLevelItemCount())]
    while frames and frames[0].child(0) is not None and frames[0].child(0).data(0, UNIT_ROLE) is None:  # a rank's item
        frames = [frames[0].child(index) for index in range(frames[0].childCount())] + frames[1:]
    titles = [frame.text(0) for frame in frames]
    assert "forward (via wrapper)" in titles, titles
    unit = next(frame for frame in frames if frame.text(0) == "forward (via wrapper)").child(0)
    assert unit.text(0) == "[0/0]" and "forward (via wrapper)" in unit.toolTip(0)
    tip = unit.toolTip(0)
    assert ("your function: " in tip and "modeling_gpt2.py:" in tip
            and "compiled as its wrapper: " in tip and "generic.py:" in tip)
    assert "wrapper" in titles, "the user's own decorator keeps its name"
