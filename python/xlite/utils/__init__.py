"""Utilities with torch.utils' names: data loading (xlite.utils.data)."""
from . import data  # noqa: F401
