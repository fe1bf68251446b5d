import torch
c = torch.compile(lambda x: x * 3, dynamic=False)
c(torch.randn(4))
with torch.compiler.set_stance("fail_on_recompile"):
    try:
        c(torch.randn(5))
    except Exception as error:
        print("raised", type(error).__name__)
