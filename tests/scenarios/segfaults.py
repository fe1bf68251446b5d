"""Dies of SIGSEGV (a read at address 0), as a crash in native code would."""

import ctypes

print("about to crash", flush=True)
ctypes.string_at(0)
