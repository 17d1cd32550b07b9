"""Neural-network modules: a Module base class that Python models subclass, PyTorch-style, whose children may be
xlite's C++ modules (Linear, Conv2d, LayerNorm, ...), plus containers, activations and losses."""
import abc
import collections

from . import _dtypes, _xlite
from ._xlite import Tensor
from ._xlite.nn import (  # noqa: F401
    AvgPool2d, BatchNorm1d, BatchNorm2d, CausalSelfAttention, Conv1d, Conv2d, ConvTranspose2d, Dropout, Embedding,
    Flatten, GroupNorm, InstanceNorm2d, LayerNorm, Linear, MaxPool2d, MLP, ReLU,
    RMSNorm, cross_entropy, mse_loss, nll_loss, l1_loss, smooth_l1_loss, huber_loss, binary_cross_entropy,
    binary_cross_entropy_with_logits, kl_div, cosine_similarity,
)
from ._xlite.optim import clip_grad_norm_

_CppModule = _xlite.nn._CppModule


class Parameter(Tensor):
    """A tensor that a Module registers as a parameter when assigned to one of its attributes. It aliases the
    tensor it was made from and requires grad."""

    def __init__(self, data, requires_grad=True):
        super().__init__(data)
        self.requires_grad_(requires_grad)


class Module(metaclass=abc.ABCMeta):
    """The base of Python models. Assigning a Parameter registers a parameter,
    assigning a module registers a child; register_buffer keeps state that is saved but not trained.

    The training mode is a TracedFlag: a compiled step that read it traces again after train() or eval()."""

    def __init__(self):
        object.__setattr__(self, "_parameters", collections.OrderedDict())
        object.__setattr__(self, "_buffers", collections.OrderedDict())
        object.__setattr__(self, "_modules", collections.OrderedDict())
        object.__setattr__(self, "_training", _xlite.TracedFlag(True, "a module's training mode (train() or eval())"))

    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise AttributeError("call Module.__init__() (super().__init__()) before assigning attributes")
        if name in self._parameters and value is not None and not isinstance(value, Parameter):
            raise TypeError(f"cannot assign a {type(value).__name__} as parameter '{name}' (wrap it in "
                            "xl.nn.Parameter, or update the parameter in place)")
        for registry in (self._parameters, self._buffers, self._modules):
            registry.pop(name, None)
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, (Module, _CppModule)):
            self._modules[name] = value
        elif isinstance(value, Tensor) and name in self.__dict__.get("_buffer_names", ()):
            self._buffers[name] = value
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for registry in (self._parameters, self._buffers, self._modules):
            registry.pop(name, None)
        object.__delattr__(self, name)

    def register_buffer(self, name, tensor):
        """State saved in state_dict but not trained (running statistics, masks)."""
        self.__dict__.setdefault("_buffer_names", set()).add(name)
        setattr(self, name, tensor)

    def register_parameter(self, name, tensor):
        setattr(self, name, tensor if isinstance(tensor, Parameter) else Parameter(tensor))

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    # Walking the tree.
    def named_children(self):
        return list(self._modules.items())

    def children(self):
        return list(self._modules.values())

    def named_modules(self, prefix=""):
        found = [(prefix, self)]
        for name, child in self._modules.items():
            path = f"{prefix}.{name}" if prefix else name
            if not isinstance(child, _CppModule):
                found.extend(child.named_modules(path))
            else:
                found.append((path, child))
        return found

    def modules(self):
        return [m for _, m in self.named_modules()]

    def _named(self, kind, prefix=""):
        own = self._parameters if kind == "parameters" else self._buffers
        found = [(f"{prefix}{name}", t) for name, t in own.items()]
        for name, child in self._modules.items():
            if not isinstance(child, _CppModule):
                found.extend(child._named(kind, f"{prefix}{name}."))
            else:
                found.extend((f"{prefix}{name}.{n}", t) for n, t in getattr(child, f"named_{kind}")())
        return found

    def named_parameters(self):
        """(dotted name, tensor) of every parameter, own first, then each child's in registration order; a
        parameter shared by several modules (tied weights) once, under its first name."""
        return _first_of_each(self._named("parameters"))

    def parameters(self):
        return [t for _, t in self.named_parameters()]

    def named_buffers(self):
        return _first_of_each(self._named("buffers"))

    def buffers(self):
        return [t for _, t in self.named_buffers()]

    def num_parameters(self):
        return sum(t.numel() for t in self.parameters())

    def state_dict(self):
        """Parameters and buffers by dotted name; the tensors share storage with the module."""
        return collections.OrderedDict(self._named("parameters") + self._named("buffers"))

    def load_state_dict(self, state_dict, strict=True):
        """Copies values in place (shapes must match); with strict, missing or unexpected names raise."""
        own = self.state_dict()
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            raise _xlite.Error(f"[load_state_dict] missing {missing}, unexpected {unexpected}")
        for name, tensor in own.items():
            if name not in state_dict:
                continue
            value = state_dict[name]
            if tuple(value.shape) != tuple(tensor.shape):
                raise _xlite.Error(f"[load_state_dict] {name}: shape {tuple(value.shape)} does not match "
                                   f"{tuple(tensor.shape)}")
            with _xlite_no_grad():
                tensor.copy_(value)
        return missing, unexpected

    # Modes.
    @property
    def training(self):
        return self._training.get()

    def train(self, mode=True):
        self._training.set(mode)
        for child in self._modules.values():
            child.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def apply(self, fn):
        """Calls fn on every child module, then on this one (initialisation)."""
        for child in self._modules.values():
            fn(child) if isinstance(child, _CppModule) else child.apply(fn)
        fn(self)
        return self

    def to(self, dtype=None):
        """Converts every floating parameter and buffer to dtype in place, as torch's module.to(dtype): the
        module's attributes and an optimizer made afterwards see the new tensors; integer buffers keep theirs."""
        if dtype is None:
            return self
        if not dtype.is_floating_point:
            raise _xlite.Error(f"[Module.to] a module's dtype must be floating, got {dtype}")
        for child in self._modules.values():
            child.to(dtype)
        for tensor in list(self._parameters.values()) + list(self._buffers.values()):
            if tensor.dtype.is_floating_point and tensor.dtype != dtype:
                tensor.data = tensor.to(dtype)
        return self

    def double(self):
        return self.to(_dtypes.float64)

    def float(self):
        return self.to(_dtypes.float32)

    def half(self):
        return self.to(_dtypes.float16)

    def bfloat16(self):
        return self.to(_dtypes.bfloat16)

    def zero_grad(self, set_to_none=True):
        """Drops every parameter's gradient (set_to_none, as PyTorch 2), or zeroes them in place."""
        for p in self.parameters():
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    def __repr__(self):
        lines = [f"{type(self).__name__}("]
        for name, child in self._modules.items():
            lines.append(f"  ({name}): " + repr(child).replace("\n", "\n  "))
        return "\n".join(lines) + ")" if len(lines) > 1 else f"{type(self).__name__}()"


def _first_of_each(named):
    seen, unique = set(), []
    for name, tensor in named:
        if hash(tensor) not in seen:  # a tensor's hash is its identity
            seen.add(hash(tensor))
            unique.append((name, tensor))
    return unique


def _xlite_no_grad():
    from ._modes import no_grad
    return no_grad()


# The C++ modules are modules too.
for _cpp in (_CppModule,):
    Module.register(_cpp)


class ModuleList(Module):
    """A list of modules whose parameters count as the owner's."""

    def __init__(self, modules=()):
        super().__init__()
        for m in modules:
            self.append(m)

    def append(self, module):
        setattr(self, str(len(self._modules)), module)
        return self

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __iter__(self):
        return iter(list(self._modules.values()))

    def __len__(self):
        return len(self._modules)


class Sequential(ModuleList):
    """Calls its modules in order."""

    def __init__(self, *modules):
        super().__init__(modules)

    def forward(self, x):
        for m in self:
            x = m(x)
        return x


class _Activation(Module):
    fn = None

    def forward(self, x):
        return type(self).fn(x)


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, x):
        return _xlite.gelu(x, self.approximate)


class Tanh(_Activation):
    fn = staticmethod(_xlite.tanh)


class Sigmoid(_Activation):
    fn = staticmethod(_xlite.sigmoid)


class SiLU(_Activation):
    fn = staticmethod(_xlite.silu)


class Identity(Module):
    def forward(self, x):
        return x


class Softmax(Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return _xlite.softmax(x, self.dim)


class CrossEntropyLoss(Module):
    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__()
        self.weight, self.ignore_index, self.reduction = weight, ignore_index, reduction
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return cross_entropy(input, target, self.weight, ignore_index=self.ignore_index, reduction=self.reduction,
                             label_smoothing=self.label_smoothing)


class NLLLoss(Module):
    def __init__(self, weight=None, ignore_index=-100, reduction="mean"):
        super().__init__()
        self.weight, self.ignore_index, self.reduction = weight, ignore_index, reduction

    def forward(self, input, target):
        return nll_loss(input, target, self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


def _pointwise_loss(name, loss, *options):
    """A loss module over (input, target) whose constructor takes the loss's options and reduction."""
    def __init__(self, *args, reduction="mean", **kwargs):
        Module.__init__(self)
        self.options = dict(zip(options, args))
        self.options.update(kwargs)
        self.reduction = reduction

    def forward(self, input, target):
        return loss(input, target, reduction=self.reduction, **self.options)

    return type(name, (Module,), {"__init__": __init__, "forward": forward, "__doc__": loss.__doc__})


MSELoss = _pointwise_loss("MSELoss", mse_loss)
L1Loss = _pointwise_loss("L1Loss", l1_loss)
SmoothL1Loss = _pointwise_loss("SmoothL1Loss", smooth_l1_loss, "beta")
HuberLoss = _pointwise_loss("HuberLoss", huber_loss, "delta")
BCELoss = _pointwise_loss("BCELoss", binary_cross_entropy, "weight")
BCEWithLogitsLoss = _pointwise_loss("BCEWithLogitsLoss", binary_cross_entropy_with_logits, "weight", "pos_weight")
KLDivLoss = _pointwise_loss("KLDivLoss", kl_div, "log_target")


class CosineSimilarity(Module):
    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return cosine_similarity(x1, x2, self.dim, self.eps)


class functional:  # noqa: N801  (torch.nn.functional's name)
    """torch.nn.functional's names for xlite's functions."""
    relu = staticmethod(_xlite.relu)
    gelu = staticmethod(_xlite.gelu)
    silu = staticmethod(_xlite.silu)
    sigmoid = staticmethod(_xlite.sigmoid)
    tanh = staticmethod(_xlite.tanh)
    softmax = staticmethod(_xlite.softmax)
    log_softmax = staticmethod(_xlite.log_softmax)
    linear = staticmethod(_xlite.linear)
    conv2d = staticmethod(_xlite.conv2d)
    max_pool2d = staticmethod(_xlite.max_pool2d)
    avg_pool2d = staticmethod(_xlite.avg_pool2d)
    embedding = staticmethod(_xlite.embedding)
    one_hot = staticmethod(_xlite.one_hot)
    pad = staticmethod(_xlite.pad)
    cross_entropy = staticmethod(cross_entropy)
    nll_loss = staticmethod(nll_loss)
    mse_loss = staticmethod(mse_loss)
    l1_loss = staticmethod(l1_loss)
    smooth_l1_loss = staticmethod(smooth_l1_loss)
    huber_loss = staticmethod(huber_loss)
    binary_cross_entropy = staticmethod(binary_cross_entropy)
    binary_cross_entropy_with_logits = staticmethod(binary_cross_entropy_with_logits)
    kl_div = staticmethod(kl_div)
    cosine_similarity = staticmethod(cosine_similarity)
    softplus = staticmethod(_xlite.softplus)
    mish = staticmethod(_xlite.mish)
    hardswish = staticmethod(_xlite.hardswish)
    hardsigmoid = staticmethod(_xlite.hardsigmoid)
    elu = staticmethod(_xlite.elu)
    leaky_relu = staticmethod(_xlite.leaky_relu)
    glu = staticmethod(_xlite.glu)
    dropout = staticmethod(_xlite.dropout)
    conv1d = staticmethod(_xlite.conv1d)
    conv_transpose2d = staticmethod(_xlite.conv_transpose2d)
    avg_pool1d = staticmethod(_xlite.avg_pool1d)
    max_pool1d = staticmethod(_xlite.max_pool1d)
    adaptive_avg_pool2d = staticmethod(_xlite.adaptive_avg_pool2d)
    interpolate = staticmethod(_xlite.interpolate)


class utils:  # noqa: N801
    clip_grad_norm_ = staticmethod(clip_grad_norm_)
