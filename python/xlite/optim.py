"""Optimizers over lists of parameters (xlite::optim). The learning rate lives in a tensor, so changing it
never recompiles a step and a replayed compiled step sees it."""
from ._xlite.optim import SGD, Adam, AdamW, Optimizer, clip_grad_norm_, warmup_cosine_lr  # noqa: F401
