"""Readers: TORCH_TRACE logs, TORCH_COMPILE_DEBUG folders, capture sessions and bundles into the session model."""
