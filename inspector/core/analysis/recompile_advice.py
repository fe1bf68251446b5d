"""What a recompile group means and what to do about it, in plain words with the exact API to call:
by the aspect of the guarded value that changed (a size, a layout, a dtype, a Python value, an object),
and by what the log says of it (automatic dynamic made it symbolic, the code made it a constant again, a
resume function's local, a compile torch started for an eager call)."""

from __future__ import annotations

from pathlib import PureWindowsPath
from typing import TYPE_CHECKING

from inspector.core.analysis.unit_origin import eager_trigger
from inspector.core.analysis.user_names import _RESUME, UserName

if TYPE_CHECKING:
    from inspector.core.analysis.recompile_groups import _GroupDraft

STANCE = ("If the new values only come during warm-up: `torch.compiler.set_stance(\"eager_on_recompile\")` after "
           "warm-up runs them eagerly instead of recompiling; in a test, `torch.compiler.set_stance("
           "\"fail_on_recompile\")` turns any recompile into an error.")


def explain(group: _GroupDraft) -> tuple[str, str]:
    """The diagnosis and the fix for one group, with the exact API to call, in the user's names."""
    named = group.name or UserName(group.subject)
    said, name, n = named.text, named.in_code, group.count
    times = "once" if n == 1 else f"{n} times"
    if group.aspect.startswith("size dim"):
        return _explain_size(group, named, times)
    if group.aspect.startswith("stride dim"):
        diagnosis = f"{said} arrived with a different memory layout (stride); Dynamo recompiled {times}."
        fix = f"Make the layout the same on every call, e.g. `{name}.contiguous()` before the compiled call."
    elif group.aspect in ("dtype", "device", "rank", "dispatch key set"):
        diagnosis = (f"{said} changed {group.aspect} ({' → '.join(group.history) or 'see the guard'}); "
                     f"Dynamo recompiled {times}.")
        fix = (f"Pass `{name}` with one {group.aspect} on every call (cast or move it before the call), or accept one "
               f"graph per {group.aspect}.")
    elif group.aspect == "dynamic marking":
        diagnosis = (f"A tensor arrived marked dynamic (`torch._dynamo.mark_dynamic`, `maybe_mark_dynamic` or "
                     f"`mark_unbacked`) where the graph was compiled for tensors without a mark; Dynamo recompiled "
                     f"{times}. torch's guard does not say which tensor.")
        fix = ("Mark the tensor before the first call as well, so every call brings the same marks (a mark stays on "
               "the tensor object: one reused from a marked call is still marked).")
    elif group.aspect == "requires_grad":
        diagnosis = f"{said} switched requires_grad (or grad mode) between calls; Dynamo recompiled {times}."
        fix = "Call the compiled code in one grad mode (e.g. always under `torch.no_grad()` for inference)."
    elif group.aspect == "value" and group.subject.startswith("len("):
        diagnosis = (f"The graph was specialised on the length {said} ({' → '.join(group.history) or 'see the guard'})"
                     f": a Python value, not a tensor; Dynamo recompiled {times}.")
        fix = (f"Keep `{name}` the same between calls, or compute it outside the compiled code and pass it in as a "
               f"tensor; else accept one compile per value (up to the recompile limit).")
    elif group.aspect == "value":
        diagnosis, fix = _explain_value(group, named, times)
    elif group.aspect == "object identity" and group.subject.endswith(".__code__"):
        function = group.subject.removesuffix(".__code__")
        diagnosis = (f"{group.function or 'This frame'}() ran with a different `{function}` ({times}): each graph was "
                     f"compiled for one `{function}` and guards on {said}. A wrapper's frame is shared by every "
                     f"function it wraps, so each new one compiles again in that frame, and all of them share its "
                     f"recompile limit.")
        fix = (f"Compile the wrapped function, not the wrapper that calls it: `torch.compile({function})` inside "
               f"the decorator, or decorate a function that is compiled already; or raise "
               f"`torch._dynamo.config.recompile_limit` if more functions share the wrapper than it allows.")
    elif group.aspect in ("object identity", "type"):
        diagnosis = (f"{said} is a different {'object' if group.aspect == 'object identity' else 'type'} "
                     f"than the graph was compiled for ({times}).")
        fix = (f"Create `{name}` once outside the loop (a new module, function or closure per call forces a "
               f"recompile each time).")
    else:
        diagnosis = f"A guard failed {times}: {group.guard}"
        fix = "Find what changes between calls in the guard above and keep it fixed."
    return diagnosis, fix


def _explain_value(group: _GroupDraft, named: UserName, times: str) -> tuple[str, str]:
    """A Python value the graph was specialised on, by what it is: a bool flag (one graph per value, and no
    more), a value automatic dynamic made symbolic (later values reuse it) or that the code made a constant
    again (a ModuleList index: no tensor can stand for it), an int or a float Dynamo kept specialised."""
    said, name = named.text, named.in_code
    values = group.history
    diagnosis = (f"The graph was specialised on the Python value of {said} "
                 f"({' → '.join(values) or 'see the guard'}); Dynamo recompiled {times}.")
    spec = group.respecialised
    if values and all(value in ("True", "False") for value in values):
        diagnosis += (" It is a bool: Dynamo always specialises on a bool, so each value gets its own graph, two "
                      "at most.")
        fix = (f"Nothing to fix if `{name}` takes each value a few times: once both graphs exist, switching finds "
               f"one of them and compiles nothing. For a single graph, pass the flag as a tensor and choose with "
               f"`torch.where` (or `torch.cond`).")
    elif spec is not None:
        where = f"{PureWindowsPath(spec.user_line.file).name}:{spec.user_line.line}" if spec.user_line else "?"
        code = f"`{spec.user_line.code}`" if spec.user_line and spec.user_line.code else "the code"
        diagnosis += (f" {group.symbol} by automatic dynamic, but {code} at {where} made it a constant again "
                      f"({spec.detail}): each new value compiles a new graph, and automatic dynamic cannot make it "
                      f"reusable.")
        if spec.user_line and spec.user_line.code and f"[{name}]" in spec.user_line.code:
            diagnosis += f" Indexing a ModuleList (or a list) needs a Python int: `{name}` can never be dynamic there."
            fix = (f"Passing `{name}` as a tensor cannot work for an index into a ModuleList or a list: expect one "
                   f"graph per index (raise `torch._dynamo.config.recompile_limit` if there are more indices than it "
                   f"allows), or stack the indexed modules' weights (`torch.func.stack_module_state`) and index the "
                   f"stacked tensors, or call the indexed module outside the compiled code.")
        else:
            fix = (f"Marking `{name}` dynamic cannot help while {code} needs it as a constant: rewrite that line so "
                   f"it does not, or accept one graph per value.")
    elif group.symbol:
        diagnosis += f" {group.symbol}: automatic dynamic, so later values reuse that graph."
        fix = (f"Nothing more to do: later values of `{name}` reuse the graph with the symbolic value. To avoid "
               f"even this recompile, pass `{name}` as a 0-dim tensor.")
    elif values and _is_float(values[0]):
        fix = (f"Pass `{name}` as a 0-dim tensor if it changes per call, or keep it constant: Dynamo kept this "
               f"float specialised (`torch._dynamo.config.specialize_float`, or code that needs it as a constant).")
    elif values and values[0].lstrip("-").isdigit():
        fix = (f"Pass `{name}` as a tensor if it changes per call, or keep it constant; for Python ints Dynamo "
               f"specialises on, `torch._dynamo.config.automatic_dynamic_shapes` (on by default) treats them as "
               f"dynamic after the first change.")
    else:
        fix = f"Keep `{name}` the same between calls, or accept one graph per value (up to the recompile limit)."
    return diagnosis, fix


def _is_float(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return not value.lstrip("-").isdigit()


def _explain_size(group: _GroupDraft, named: UserName, times: str) -> tuple[str, str]:
    """A size change, by cause: an input's shape (mark it dynamic) or a size that comes out of the data
    (an op like nonzero broke the graph; no input can be marked for it)."""
    said, name = named.text, named.in_code
    dim = group.aspect.rsplit(" ", 1)[1]
    values = " → ".join(group.history)
    small = any(value in ("0", "1") for value in group.history)
    if named.data_dependent:
        op = named.produced_by.location
        made = f"`{op.code}` at {PureWindowsPath(op.file).name}:{op.line}" if op and op.code else "an op"
        diagnosis = (f"{named.short} got a new size in dim {dim} ({values}), a size that depends on the data: it is "
                     f"the result of {made}, an op whose output size depends on its input's values, so the graph "
                     f"broke there to run it; Dynamo recompiled {times}.")
    else:
        diagnosis = f"{said} arrived with a new size in dim {dim} ({values}); Dynamo recompiled {times}."
    spec = group.specialised
    if spec is not None:
        where = f"{PureWindowsPath(spec.user_line.file).name}:{spec.user_line.line}" if spec.user_line else "?"
        diagnosis += (f" The dim was dynamic, but the graph it failed against specialised it: {spec.detail} at {where}"
                      + (f" by `{spec.user_line.code}`" if spec.user_line and spec.user_line.code else "")
                      + ", so no other size could reuse that graph.")
    if group.symbol:
        diagnosis += f" {group.symbol}: automatic dynamic"
        diagnosis += (". Sizes 0 and 1 are always specialised, even on a dynamic dim: every switch between 1 and "
                      "another size compiles again." if small else ", so later sizes reuse that graph.")
    elif group.count == 1:
        diagnosis += (" After the first change Dynamo usually makes the dim symbolic (automatic dynamic), so one "
                      "recompile per dim is expected and later sizes reuse the new graph.")
    elif small:
        diagnosis += (" Sizes 0 and 1 are always specialised, even on a dynamic dim: every switch between 1 and "
                      "another size compiles again.")
    else:
        diagnosis += " The dim did not become dynamic, so each new size compiled a new graph."
    resumed = _RESUME.match(group.function or "") if group.resumed_from else None
    operator = eager_trigger(group.units[0]) if group.units else None
    if operator:
        diagnosis += (f" torch started this compile itself, for an eager {operator} call: your code never passed "
                      f"this function to torch.compile.")
    if resumed and not named.data_dependent:
        diagnosis += (f" `{name}` is a local of {group.resumed_from}() that Dynamo hands to the code it resumes "
                      f"after the graph break at line {resumed['line']}.")
    if operator and not named.data_dependent and spec is None:
        fix = (f"`torch.compile(..., dynamic=True)` does not apply to a compile torch starts for an eager {operator} "
               f"call. Mark dim {dim} of that operand dynamic before the call (`torch._dynamo.mark_dynamic(tensor, "
               f"{dim})`), or call {operator} inside a function you compile, where Dynamo traces it with the rest "
               f"of your code and automatic dynamic applies.")
    elif resumed and not named.data_dependent:
        fix = (f"No call of yours can mark `{name}`: it is made inside {group.resumed_from}(). Mark the inputs of "
               f"{group.resumed_from}() it is computed from dynamic (automatic dynamic does so after their first "
               f"change), or remove the graph break at line {resumed['line']} so `{name}` stays inside one graph.")
    elif named.data_dependent:
        fix = ("No input of yours has this size, so mark_dynamic cannot reach it. Keep the op in the graph with "
               "`torch._dynamo.config.capture_dynamic_output_shape_ops = True` (the size becomes an unbacked "
               f"symbol; tell Dynamo what you know about it with `torch._check({name}.shape[{dim}] > 0)`-style checks "
               f"where later code needs them), or move the op out of the compiled code and pass `{name}` in, "
               f"marked with `torch._dynamo.mark_dynamic({name}, {dim})`.")
    elif spec is not None:
        line = f"`{spec.user_line.code}`" if spec.user_line and spec.user_line.code else "the code at that line"
        fix = (f"Marking the dim dynamic cannot help while {line} compares `{name}.shape[{dim}]` with a constant: "
               "that comparison is what makes the size static. Branch on something that is not the size (a flag, "
               "a config value), write the branch with `torch.cond`, or accept one graph per size it tests.")
    elif named.module_state:  # measured on torch 2.13: mark_dynamic alone leaves a buffer static
        fix = ("Dynamo keeps the shapes of module parameters and buffers static: set "
               "`torch._dynamo.config.force_parameter_static_shapes = False` and "
               "`torch._dynamo.config.force_nn_module_property_static_shapes = False`, and mark each new tensor "
               f"when you assign it: `torch._dynamo.mark_dynamic({name}, {dim})`.")
    elif named.role and not named.user:
        fix = (f"Mark dim {dim} dynamic before the first call on the tensor Dynamo calls `{named.dynamo}` "
               f"({named.role}): `torch._dynamo.mark_dynamic(tensor, {dim})` (or "
               f"`torch._dynamo.maybe_mark_dynamic(tensor, {dim})` if it may stay static), or compile with "
               f"`torch.compile(..., dynamic=True)`. Padding it to a few fixed sizes also works.")
    else:
        fix = (f"Mark the dim dynamic before the first call: `torch._dynamo.mark_dynamic({name}, {dim})` "
               f"(or `torch._dynamo.maybe_mark_dynamic({name}, {dim})` if it may stay static), or compile with "
               f"`torch.compile(..., dynamic=True)`. Padding {name} to a few fixed sizes also works.")
    return diagnosis, fix
