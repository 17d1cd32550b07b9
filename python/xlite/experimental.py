"""PyTorch/XLA 2.4's torch_xla.experimental names: eager_mode and compile."""
from ._modes import compile, eager_mode  # noqa: F401
