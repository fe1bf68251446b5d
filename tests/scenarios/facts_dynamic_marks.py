"""Dynamic dims as the user marks them and as torch refines them: a marked dim whose range a
`torch._check` narrows to [2, 64]; a plain compile that a later `mark_dynamic` call recompiles (the
`_has_dynamo_dim_marking` guard); and `mark_dynamic` on a dim of size 1, which the 0/1 specialisation
keeps static without a word (torch suggests `mark_unbacked` for that)."""

import torch


def bounded(x):
    torch._check(x.shape[0] <= 64)
    return x * 2


def total(x):
    return x.sum(0) + 1


def scale_rows(rows, gains):
    return rows * gains


if __name__ == "__main__":
    compiled = torch.compile(bounded, backend="eager")
    a = torch.randn(4, 8)
    torch._dynamo.mark_dynamic(a, 0)
    compiled(a)
    summed = torch.compile(total, backend="eager")
    summed(torch.randn(3, 8))
    b = torch.randn(3, 8)  # the same size, now marked: the marking guard alone fails
    torch._dynamo.mark_dynamic(b, 0)
    summed(b)
    pair = torch.compile(scale_rows, backend="eager")
    rows, gains = torch.randn(4, 8), torch.randn(1, 8)
    torch._dynamo.mark_dynamic(rows, 0)
    torch._dynamo.mark_dynamic(gains, 0)  # a dim of size 1: the mark is dropped
    pair(rows, gains)
