"""Utilities with torch.utils' names: data loading (xlite.utils.data) and gradient checkpointing
(xlite.utils.checkpoint)."""
from . import checkpoint, data  # noqa: F401
