"""torch.export.draft_export of a model with three issues it works around: a branch on a tensor's
value (a data-dependent expression it must assume), a branch on a size declared dynamic (a guard
that specialises it) and a custom op with no fake kernel. Draft export
logs them to TORCH_DTRACE; torch's own report (ep._report) is written beside it (draft_facts.json)
for the reader tests to compare with."""

import json

import torch
from torch import nn


@torch.library.custom_op("tci::triple", mutates_args=())
def triple(x: torch.Tensor) -> torch.Tensor:  # no fake kernel registered
    return x * 3


class Branchy(nn.Module):
    def forward(self, x, counts):
        total = counts.sum().item()
        if total > 2:  # depends on the data
            x = x * 2
        if x.shape[0] == 4:  # specialises the dynamic dim
            x = x + 1
        return triple(x).sum()


if __name__ == "__main__":
    exported = torch.export.draft_export(Branchy(), (torch.randn(4, 8), torch.tensor([1, 0, 3])),
                                         dynamic_shapes={"x": {0: torch.export.Dim.DYNAMIC}, "counts": None})
    failures = [{"type": failure.failure_type.name, "expr": failure.data.get("expr"), "op": failure.data.get("op"),
                 "line": next((frame["line"] for frame in reversed(failure.data.get("user_stack") or [])
                               if frame.get("name") == "forward"), None),
                 "sources": failure.data.get("symbol_to_sources"), "prefix": failure.data.get("prefix")}
                for failure in exported._report.failures]
    with open("draft_facts.json", "w") as handle:
        json.dump({"failures": failures}, handle)
