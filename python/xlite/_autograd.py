"""Functional autograd over Python functions, in JAX's style."""
from . import _xlite


def _positions(argnums):
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def value_and_grad(fn, argnums=0):
    """A function that returns fn(*args) and its gradients with respect to the arguments at argnums.

    fn must return a scalar tensor. With an int argnums the gradient is one tensor, with a tuple a tuple."""
    positions = _positions(argnums)

    def evaluate(*args, **kwargs):
        for p in positions:
            if not isinstance(args[p], _xlite.Tensor):
                raise _xlite.Error(f"[grad] argument {p} is not a tensor")

        def of_inputs(inputs):
            call = list(args)
            for p, x in zip(positions, inputs):
                call[p] = x
            return fn(*call, **kwargs)

        value, grads = _xlite._value_and_grad(of_inputs, [args[p] for p in positions])
        grads = [g if _xlite._is_defined(g) else None for g in grads]
        return value, grads[0] if isinstance(argnums, int) else tuple(grads)

    return evaluate


def grad(fn, argnums=0):
    """A function that returns the gradients of fn's scalar result (jax.grad)."""
    both = value_and_grad(fn, argnums)
    return lambda *args, **kwargs: both(*args, **kwargs)[1]


def custom_vjp(forward, backward):
    """A function with a backward of its own.

    forward(*inputs) -> tensor runs without recording gradients; backward(inputs, output, output_grad) returns
    one gradient per input (None for an input without one)."""
    undefined = _xlite._undefined_tensor()

    def backward_list(inputs, output, output_grad):
        grads = backward(tuple(inputs), output, output_grad)
        if isinstance(grads, _xlite.Tensor):
            grads = (grads,)
        return [undefined if g is None else g for g in grads]

    call = _xlite._custom_vjp(lambda inputs: forward(*inputs), backward_list)
    return lambda *inputs: call(list(inputs))
