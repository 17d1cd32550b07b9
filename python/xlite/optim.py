"""Optimizers over lists of parameters (xlite::optim). The learning rate lives in a tensor, so changing it
never recompiles a step and a replayed compiled step sees it."""
from ._xlite.optim import (  # noqa: F401
    SGD, Adagrad, Adam, AdamW, Lion, Optimizer, RMSprop, clip_grad_norm_, lr_scheduler, warmup_cosine_lr,
)
