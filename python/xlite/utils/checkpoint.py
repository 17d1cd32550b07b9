"""Gradient checkpointing with torch.utils.checkpoint's name: the backward pass runs the function again instead
of keeping its activations."""
from .. import _xlite


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    """function(*args), keeping none of its intermediate values for the backward pass, which runs it again
    (with the same random draws) once the result's gradient is known. Tensor arguments get gradients; so do
    parameters the function reads. Keyword arguments are passed through; use_reentrant is accepted for
    torch's signature and changes nothing."""
    del use_reentrant
    tensors = [a for a in args if isinstance(a, _xlite.Tensor)]

    def run(inputs):
        it = iter(inputs)
        return function(*[next(it) if isinstance(a, _xlite.Tensor) else a for a in args], **kwargs)

    return _xlite._checkpoint(run, tensors)
