"""xlite.nn's losses (functions and modules), xlite.nn.functional's names and the RMSprop and Adagrad optimizers,
checked against torch.nn, torch.nn.functional and torch.optim 1.13 on the same inputs and the same model.

xlite's functions are looked up when a test runs, not at import, so that this file collects against a build
that lacks some of them."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import xlite as xl
from torch_compare import check, data, mse_training_steps, pair

# --------------------------------------------------------------------------------------------------------------
# Helpers (the shared ones are in torch_compare.py)

def targets(shape, classes, seed, ignore=None, ignored=()):
    """Class targets [N, d1, ...] as int64 NumPy data, with ignore at the flat positions `ignored`."""
    t = np.array(np.random.default_rng(seed).integers(0, classes, shape), dtype=np.int64)
    for i in ignored:
        t.reshape(-1)[i] = ignore
    return t


# --------------------------------------------------------------------------------------------------------------
# Class losses: cross_entropy, nll_loss

# (scores shape, target shape): [N, C], [N, C, d1, d2] and an unbatched [C] with a 0-dim target.
CLASS_SHAPES = [((6, 5), (6,)), ((3, 4, 2, 3), (3, 2, 3)), ((5,), ())]
# ignore_index and the flat target positions set to it (none for the unbatched case, whose one target would then
# be ignored: a mean over no targets, nan in torch).
IGNORES = [(-100, ()), (-100, (0, 3)), (2, ())]


@pytest.mark.parametrize("shapes", CLASS_SHAPES, ids=str)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", IGNORES, ids=str)
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
def test_cross_entropy(shapes, reduction, weighted, ignore, label_smoothing):
    shape, target_shape = shapes
    classes = shape[1] if len(shape) > 1 else shape[0]
    ignore_index, ignored = ignore
    if not target_shape and ignored:
        pytest.skip("the one target of an unbatched input would be ignored")
    x, t = pair(shape, "float32", -3, 3, seed=1)
    target = targets(target_shape, classes, seed=2, ignore=ignore_index, ignored=ignored)
    if not target_shape and target.item() == ignore_index:
        target = np.asarray((ignore_index + 1) % classes, dtype=np.int64)
    w, wt = pair((classes,), "float32", 0.2, 2.0, seed=3)
    kw = {"ignore_index": ignore_index, "reduction": reduction, "label_smoothing": label_smoothing}
    want = F.cross_entropy(t, torch.from_numpy(target), wt if weighted else None, **kw)
    got = xl.nn.functional.cross_entropy(x, xl.tensor(target), w if weighted else None, **kw)
    check(got, want, 1e-5, 1e-6)
    check(xl.nn.cross_entropy(x, xl.tensor(target), weight=w if weighted else None, **kw), want, 1e-5, 1e-6)
    # The gradient (its target's part is a one-hot select, not a scatter), weighted per element for "none".
    x.requires_grad_()
    t.requires_grad_()
    scale, scale_t = pair(tuple(want.shape), "float32", 0.5, 1.5, seed=7)
    (xl.nn.functional.cross_entropy(x, xl.tensor(target), w if weighted else None, **kw) * scale).sum().backward()
    (F.cross_entropy(t, torch.from_numpy(target), wt if weighted else None, **kw) * scale_t).sum().backward()
    check(x.grad, t.grad, 1e-5, 1e-6)


@pytest.mark.parametrize("shapes", CLASS_SHAPES, ids=str)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", IGNORES, ids=str)
def test_nll_loss(shapes, reduction, weighted, ignore):
    shape, target_shape = shapes
    classes = shape[1] if len(shape) > 1 else shape[0]
    ignore_index, ignored = ignore
    if not target_shape and ignored:
        pytest.skip("the one target of an unbatched input would be ignored")
    x, t = pair(shape, "float32", -3, 0, seed=4)  # log-probabilities, or any scores
    target = targets(target_shape, classes, seed=5, ignore=ignore_index, ignored=ignored)
    if not target_shape and target.item() == ignore_index:
        target = np.asarray((ignore_index + 1) % classes, dtype=np.int64)
    w, wt = pair((classes,), "float32", 0.2, 2.0, seed=6)
    kw = {"ignore_index": ignore_index, "reduction": reduction}
    want = F.nll_loss(t, torch.from_numpy(target), wt if weighted else None, **kw)
    check(xl.nn.functional.nll_loss(x, xl.tensor(target), w if weighted else None, **kw), want, 1e-5, 1e-6)
    check(xl.nn.nll_loss(x, xl.tensor(target), weight=w if weighted else None, **kw), want, 1e-5, 1e-6)


def test_class_losses_defaults_dtypes_and_known_values():
    x, t = pair((4, 3), "float64", seed=7)
    target = np.array([0, 2, 1, 2])
    check(xl.nn.functional.cross_entropy(x, xl.tensor(target)), F.cross_entropy(t, torch.from_numpy(target)))
    check(xl.nn.functional.nll_loss(x, xl.tensor(target)), F.nll_loss(t, torch.from_numpy(target)))
    # int32 targets work in xlite as int64 ones (torch takes only int64).
    f, ft = pair((4, 3), "float32", seed=8)
    check(xl.nn.functional.cross_entropy(f, xl.tensor(target.astype(np.int32))),
          F.cross_entropy(ft, torch.from_numpy(target)), 1e-5, 1e-6)
    uniform = xl.nn.functional.cross_entropy(xl.zeros(2, 4), xl.tensor([1, 3]))
    assert uniform.item() == pytest.approx(math.log(4), rel=1e-6)
    assert xl.nn.functional.nll_loss(xl.tensor([[-1.0, -2.0]]), xl.tensor([1])).item() == 2.0


# --------------------------------------------------------------------------------------------------------------
# Pointwise losses

REDUCTIONS = ["mean", "sum", "none"]
SHAPES = [(3, 4), (2, 3, 4), (5,)]


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mse_l1(name, shape, reduction, dtype):
    x, t = pair(shape, dtype, seed=9)
    y, u = pair(shape, dtype, seed=10)
    want = getattr(F, name)(t, u, reduction=reduction)
    check(getattr(xl.nn.functional, name)(x, y, reduction=reduction), want, 1e-5, 1e-6)
    check(getattr(xl.nn, name)(x, y, reduction), want, 1e-5, 1e-6)
    if reduction == "mean":
        check(getattr(xl.nn.functional, name)(x, y), getattr(F, name)(t, u), 1e-5, 1e-6)


@pytest.mark.parametrize("beta", [1.0, 0.5, 2.0, 0.0])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_smooth_l1_loss(beta, reduction):
    x, t = pair((4, 5), "float32", -3, 3, seed=11)  # differences on both sides of beta
    y, u = pair((4, 5), "float32", -3, 3, seed=12)
    want = F.smooth_l1_loss(t, u, reduction=reduction, beta=beta)
    check(xl.nn.functional.smooth_l1_loss(x, y, beta=beta, reduction=reduction), want, 1e-5, 1e-6)
    check(xl.nn.smooth_l1_loss(x, y, beta, reduction), want, 1e-5, 1e-6)
    if beta == 1.0 and reduction == "mean":
        check(xl.nn.functional.smooth_l1_loss(x, y), F.smooth_l1_loss(t, u), 1e-5, 1e-6)


@pytest.mark.parametrize("delta", [1.0, 0.5, 2.0])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_huber_loss(delta, reduction):
    x, t = pair((4, 5), "float32", -3, 3, seed=13)
    y, u = pair((4, 5), "float32", -3, 3, seed=14)
    want = F.huber_loss(t, u, reduction=reduction, delta=delta)
    check(xl.nn.functional.huber_loss(x, y, delta=delta, reduction=reduction), want, 1e-5, 1e-6)
    check(xl.nn.huber_loss(x, y, delta, reduction), want, 1e-5, 1e-6)
    if delta == 1.0 and reduction == "mean":
        check(xl.nn.functional.huber_loss(x, y), F.huber_loss(t, u), 1e-5, 1e-6)


@pytest.mark.parametrize("weight_shape", [None, (4,), (3, 4), (3, 1)], ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("soft", [False, True])
def test_binary_cross_entropy(weight_shape, reduction, soft):
    p, pt = pair((3, 4), "float32", 0.02, 0.98, seed=15)
    y, u = pair((3, 4), "float32", 0.0, 1.0, seed=16)
    if not soft:
        y, u = xl.tensor((np.asarray(y) > 0.5).astype(np.float32)), (u > 0.5).float()
    w, wt = pair(weight_shape, "float32", 0.2, 2.0, seed=17) if weight_shape else (None, None)
    want = F.binary_cross_entropy(pt, u, wt, reduction=reduction)
    check(xl.nn.functional.binary_cross_entropy(p, y, w, reduction=reduction), want, 1e-5, 1e-6)
    check(xl.nn.binary_cross_entropy(p, y, weight=w, reduction=reduction), want, 1e-5, 1e-6)


def test_binary_cross_entropy_at_zero_and_one():
    """Probabilities of exactly 0 and 1: the logs are clamped at -100, as torch's."""
    p = [0.0, 1.0, 0.0, 1.0, 0.5]
    y = [0.0, 1.0, 1.0, 0.0, 1.0]
    want = F.binary_cross_entropy(torch.tensor(p), torch.tensor(y), reduction="none")
    check(xl.nn.functional.binary_cross_entropy(xl.tensor(p), xl.tensor(y), reduction="none"), want, 1e-6, 1e-6)
    check(xl.nn.functional.binary_cross_entropy(xl.tensor(p), xl.tensor(y)),
          F.binary_cross_entropy(torch.tensor(p), torch.tensor(y)), 1e-6, 1e-6)


@pytest.mark.parametrize("weight_shape", [None, (4,), (3, 4)], ids=str)
@pytest.mark.parametrize("pos_weight_shape", [None, (4,), (1,)], ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy_with_logits(weight_shape, pos_weight_shape, reduction):
    x, t = pair((3, 4), "float32", -5, 5, seed=18)
    y, u = pair((3, 4), "float32", 0.0, 1.0, seed=19)
    w, wt = pair(weight_shape, "float32", 0.2, 2.0, seed=20) if weight_shape else (None, None)
    pw, pwt = pair(pos_weight_shape, "float32", 0.5, 3.0, seed=21) if pos_weight_shape else (None, None)
    want = F.binary_cross_entropy_with_logits(t, u, wt, reduction=reduction, pos_weight=pwt)
    got = xl.nn.functional.binary_cross_entropy_with_logits(x, y, w, pos_weight=pw, reduction=reduction)
    check(got, want, 1e-5, 1e-6)
    check(xl.nn.binary_cross_entropy_with_logits(x, y, weight=w, pos_weight=pw, reduction=reduction), want,
          1e-5, 1e-6)


def test_binary_cross_entropy_with_logits_is_stable():
    x = [-100.0, 100.0, -100.0, 100.0, 0.0, 30.0, -30.0]
    y = [0.0, 1.0, 1.0, 0.0, 0.5, 1.0, 0.0]
    pw = [2.0] * 7
    want = F.binary_cross_entropy_with_logits(torch.tensor(x), torch.tensor(y), reduction="none",
                                              pos_weight=torch.tensor(pw))
    got = xl.nn.functional.binary_cross_entropy_with_logits(xl.tensor(x), xl.tensor(y), reduction="none",
                                                            pos_weight=xl.tensor(pw))
    assert np.isfinite(np.asarray(got)).all()
    check(got, want, 1e-6, 1e-6)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none", "batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.filterwarnings("ignore:reduction. 'mean'")  # torch's advice to use batchmean
def test_kl_div(reduction, log_target, dtype):
    x, t = pair((4, 5), dtype, -3, 3, seed=22)
    y, u = pair((4, 5), dtype, -3, 3, seed=23)
    t = torch.log_softmax(t, 1)
    u = torch.log_softmax(u, 1) if log_target else torch.softmax(u, 1)
    if not log_target:
        u[0, 1] = 0.0  # a target probability of 0 contributes 0 (0 log 0)
        u[2, 3] = 0.0
    x, y = xl.tensor(t.numpy()), xl.tensor(u.numpy())
    want = F.kl_div(t, u, reduction=reduction, log_target=log_target)
    check(xl.nn.functional.kl_div(x, y, reduction=reduction, log_target=log_target), want, 1e-5, 1e-6)
    check(xl.nn.kl_div(x, y, reduction, log_target), want, 1e-5, 1e-6)


@pytest.mark.parametrize("shapes, dim", [
    (((3, 4), (3, 4)), 1), (((3, 4), (3, 4)), 0), (((2, 3, 4), (2, 3, 4)), -1), (((2, 3, 4), (2, 3, 4)), 1),
    (((3, 4), (1, 4)), 1), (((5,), (5,)), 0),
], ids=str)
@pytest.mark.parametrize("eps", [1e-8, 1e-3])
def test_cosine_similarity(shapes, dim, eps):
    x, t = pair(shapes[0], "float32", seed=24)
    y, u = pair(shapes[1], "float32", seed=25)
    want = F.cosine_similarity(t, u, dim, eps)
    check(xl.nn.functional.cosine_similarity(x, y, dim, eps), want, 1e-5, 1e-6)
    check(xl.nn.cosine_similarity(x1=x, x2=y, dim=dim, eps=eps), want, 1e-5, 1e-6)
    if dim == 1 and eps == 1e-8:
        check(xl.nn.functional.cosine_similarity(x, y), F.cosine_similarity(t, u), 1e-5, 1e-6)


def test_cosine_similarity_known_values():
    a = xl.tensor([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    b = xl.tensor([[0.0, 1.0], [2.0, 2.0], [1.0, 0.0]])
    got = xl.nn.functional.cosine_similarity(a, b)
    want = F.cosine_similarity(torch.tensor(np.asarray(a)), torch.tensor(np.asarray(b)))
    check(got, want, 1e-6, 1e-6)
    assert got.tolist() == pytest.approx([0.0, 1.0, 0.0], abs=1e-6)  # a zero vector gives 0, not nan


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
                                  "binary_cross_entropy_with_logits", "kl_div"])
def test_pointwise_losses_keep_float64(name):
    lo, hi = (0.1, 0.9) if name == "binary_cross_entropy" else (-2, 2)
    x, t = pair((3, 4), "float64", lo, hi, seed=26)
    y, u = pair((3, 4), "float64", 0.0, 1.0, seed=27)
    got = getattr(xl.nn.functional, name)(x, y, reduction="sum")
    want = getattr(F, name)(t, u, reduction="sum")
    check(got, want)


# --------------------------------------------------------------------------------------------------------------
# Gradients of the losses


def _class_case(fn_x, fn_t, weighted, smoothing=None, ignore=False):
    target = targets((6,), 4, seed=30, ignore=-100, ignored=(2,) if ignore else ())
    w = data((4,), "float32", 0.2, 2.0, seed=31)
    kw = {} if smoothing is None else {"label_smoothing": smoothing}

    def xfn(x):
        return fn_x(x, xl.tensor(target), xl.tensor(w) if weighted else None, **kw)

    def tfn(t):
        return fn_t(t, torch.from_numpy(target), torch.from_numpy(w) if weighted else None, **kw)
    return xfn, tfn, (6, 4), -3, 3


def _pointwise_case(name, lo, hi, target_lo, target_hi, **kw):
    y = data((3, 4), "float32", target_lo, target_hi, seed=32)

    def xfn(x):
        return getattr(xl.nn.functional, name)(x, xl.tensor(y), **kw)

    def tfn(t):
        return getattr(F, name)(t, torch.from_numpy(y), **kw)
    return xfn, tfn, (3, 4), lo, hi


def _grad_cases():
    nn = lambda: xl.nn.functional  # noqa: E731  (looked up when a case runs)
    pw = data((4,), "float32", 0.5, 3.0, seed=33)
    return {
        "cross_entropy": _class_case(lambda *a, **k: nn().cross_entropy(*a, **k), F.cross_entropy, False),
        "cross_entropy_weighted_smoothed": _class_case(lambda *a, **k: nn().cross_entropy(*a, **k), F.cross_entropy,
                                                       True, 0.1, True),
        "nll_loss_weighted": _class_case(lambda *a, **k: nn().nll_loss(*a, **k), F.nll_loss, True, None, True),
        "mse_loss": _pointwise_case("mse_loss", -2, 2, -2, 2),
        "l1_loss_sum": _pointwise_case("l1_loss", -2, 2, -2, 2, reduction="sum"),
        "smooth_l1_loss": _pointwise_case("smooth_l1_loss", -3, 3, -3, 3, beta=0.7),
        "huber_loss": _pointwise_case("huber_loss", -3, 3, -3, 3, delta=1.5),
        "binary_cross_entropy": _pointwise_case("binary_cross_entropy", 0.05, 0.95, 0, 1),
        "bce_with_logits": _pointwise_case("binary_cross_entropy_with_logits", -4, 4, 0, 1),
        "bce_with_logits_pos_weight": (
            lambda x: xl.nn.functional.binary_cross_entropy_with_logits(
                x, xl.tensor(data((3, 4), "float32", 0, 1, seed=34)), pos_weight=xl.tensor(pw)),
            lambda t: F.binary_cross_entropy_with_logits(
                t, torch.from_numpy(data((3, 4), "float32", 0, 1, seed=34)), pos_weight=torch.from_numpy(pw)),
            (3, 4), -4, 4),
        "kl_div_batchmean": (
            lambda x: xl.nn.functional.kl_div(xl.log_softmax(x, 1), xl.tensor(data((3, 4), "float32", 0.1, 1, 35)),
                                              reduction="batchmean"),
            lambda t: F.kl_div(torch.log_softmax(t, 1), torch.from_numpy(data((3, 4), "float32", 0.1, 1, 35)),
                               reduction="batchmean"),
            (3, 4), -2, 2),
        "kl_div_log_target": _pointwise_case("kl_div", -3, 0, -3, 0, reduction="sum", log_target=True),
        "cosine_similarity": (
            lambda x: xl.nn.functional.cosine_similarity(x, xl.tensor(data((3, 4), "float32", -2, 2, 36))).sum(),
            lambda t: F.cosine_similarity(t, torch.from_numpy(data((3, 4), "float32", -2, 2, 36))).sum(),
            (3, 4), -2, 2),
    }


GRAD_NAMES = sorted(_grad_cases())


@pytest.mark.parametrize("name", GRAD_NAMES)
def test_loss_gradients_match_torch(name):
    xfn, tfn, shape, lo, hi = _grad_cases()[name]
    array = data(shape, "float32", lo, hi, seed=37)
    x = xl.tensor(array).requires_grad_()
    t = torch.tensor(array, requires_grad=True)
    loss, tloss = xfn(x), tfn(t)
    check(loss, tloss, 1e-5, 1e-6)
    loss.backward()
    tloss.backward()
    assert x.grad is not None
    check(x.grad, t.grad, 1e-4, 1e-6)


# --------------------------------------------------------------------------------------------------------------
# Loss modules


def _module_cases():
    w5 = data((5,), "float32", 0.2, 2.0, seed=40)
    w4 = data((4,), "float32", 0.2, 2.0, seed=41)
    logits = ((6, 5), -3, 3)
    probs = ((3, 4), 0.05, 0.95)
    values = ((3, 4), -3, 3)
    classes = ("classes", 5)
    unit = ("unit", None)
    same = ("same", None)
    return {
        "CrossEntropyLoss": (lambda: xl.nn.CrossEntropyLoss(), lambda: torch.nn.CrossEntropyLoss(), logits, classes),
        "CrossEntropyLoss_options": (
            lambda: xl.nn.CrossEntropyLoss(weight=xl.tensor(w5), ignore_index=3, reduction="sum",
                                           label_smoothing=0.1),
            lambda: torch.nn.CrossEntropyLoss(weight=torch.from_numpy(w5), ignore_index=3, reduction="sum",
                                              label_smoothing=0.1), logits, classes),
        "CrossEntropyLoss_weighted_mean": (
            lambda: xl.nn.CrossEntropyLoss(xl.tensor(w5)), lambda: torch.nn.CrossEntropyLoss(torch.from_numpy(w5)),
            logits, classes),
        "NLLLoss": (lambda: xl.nn.NLLLoss(), lambda: torch.nn.NLLLoss(), logits, classes),
        "NLLLoss_options": (
            lambda: xl.nn.NLLLoss(weight=xl.tensor(w5), reduction="none", ignore_index=0),
            lambda: torch.nn.NLLLoss(weight=torch.from_numpy(w5), reduction="none", ignore_index=0), logits, classes),
        "MSELoss": (lambda: xl.nn.MSELoss(), lambda: torch.nn.MSELoss(), values, same),
        "MSELoss_sum": (lambda: xl.nn.MSELoss(reduction="sum"), lambda: torch.nn.MSELoss(reduction="sum"), values,
                        same),
        "L1Loss_none": (lambda: xl.nn.L1Loss(reduction="none"), lambda: torch.nn.L1Loss(reduction="none"), values,
                        same),
        "L1Loss": (lambda: xl.nn.L1Loss(), lambda: torch.nn.L1Loss(), values, same),
        "SmoothL1Loss": (lambda: xl.nn.SmoothL1Loss(), lambda: torch.nn.SmoothL1Loss(), values, same),
        "SmoothL1Loss_beta": (lambda: xl.nn.SmoothL1Loss(beta=0.5), lambda: torch.nn.SmoothL1Loss(beta=0.5), values,
                              same),
        "SmoothL1Loss_sum_beta": (lambda: xl.nn.SmoothL1Loss(reduction="sum", beta=2.0),
                                  lambda: torch.nn.SmoothL1Loss(reduction="sum", beta=2.0), values, same),
        "HuberLoss": (lambda: xl.nn.HuberLoss(), lambda: torch.nn.HuberLoss(), values, same),
        "HuberLoss_delta": (lambda: xl.nn.HuberLoss(delta=2.0), lambda: torch.nn.HuberLoss(delta=2.0), values, same),
        "HuberLoss_none": (lambda: xl.nn.HuberLoss(reduction="none", delta=0.5),
                           lambda: torch.nn.HuberLoss(reduction="none", delta=0.5), values, same),
        "BCELoss": (lambda: xl.nn.BCELoss(), lambda: torch.nn.BCELoss(), probs, unit),
        "BCELoss_weight": (lambda: xl.nn.BCELoss(weight=xl.tensor(w4)),
                           lambda: torch.nn.BCELoss(weight=torch.from_numpy(w4)), probs, unit),
        "BCELoss_sum": (lambda: xl.nn.BCELoss(reduction="sum"), lambda: torch.nn.BCELoss(reduction="sum"), probs,
                        unit),
        "BCEWithLogitsLoss": (lambda: xl.nn.BCEWithLogitsLoss(), lambda: torch.nn.BCEWithLogitsLoss(), values, unit),
        "BCEWithLogitsLoss_pos_weight": (
            lambda: xl.nn.BCEWithLogitsLoss(pos_weight=xl.tensor(w4)),
            lambda: torch.nn.BCEWithLogitsLoss(pos_weight=torch.from_numpy(w4)), values, unit),
        "BCEWithLogitsLoss_weight_none": (
            lambda: xl.nn.BCEWithLogitsLoss(weight=xl.tensor(w4), pos_weight=xl.tensor(w4[::-1].copy()),
                                            reduction="none"),
            lambda: torch.nn.BCEWithLogitsLoss(weight=torch.from_numpy(w4),
                                               pos_weight=torch.from_numpy(w4[::-1].copy()), reduction="none"),
            values, unit),
        "KLDivLoss_batchmean": (lambda: xl.nn.KLDivLoss(reduction="batchmean"),
                                lambda: torch.nn.KLDivLoss(reduction="batchmean"), ((3, 4), -3, 0), unit),
        "KLDivLoss_log_target": (lambda: xl.nn.KLDivLoss(reduction="sum", log_target=True),
                                 lambda: torch.nn.KLDivLoss(reduction="sum", log_target=True), ((3, 4), -3, 0),
                                 ("log", None)),
    }


MODULE_NAMES = sorted(_module_cases())


@pytest.mark.parametrize("name", MODULE_NAMES)
def test_loss_modules(name):
    make_x, make_t, (shape, lo, hi), (kind, classes) = _module_cases()[name]
    x, t = pair(shape, "float32", lo, hi, seed=42)
    if kind == "classes":
        target = targets(shape[:1], classes, seed=43)
        y, u = xl.tensor(target), torch.from_numpy(target)
    elif kind == "unit":
        y, u = pair(shape, "float32", 0.0, 1.0, seed=44)
    elif kind == "log":
        y, u = pair(shape, "float32", -3, 0, seed=44)
    else:
        y, u = pair(shape, "float32", lo, hi, seed=44)
    module, reference = make_x(), make_t()
    assert isinstance(module, xl.nn.Module)
    check(module(x, y), reference(t, u), 1e-5, 1e-6)
    check(module.forward(x, y), reference(t, u), 1e-5, 1e-6)


@pytest.mark.parametrize("dim, eps", [(1, 1e-8), (0, 1e-8), (-1, 1e-3)])
def test_cosine_similarity_module(dim, eps):
    x, t = pair((3, 4), "float32", seed=45)
    y, u = pair((3, 4), "float32", seed=46)
    module = xl.nn.CosineSimilarity(dim=dim, eps=eps)
    check(module(x, y), torch.nn.CosineSimilarity(dim=dim, eps=eps)(t, u), 1e-5, 1e-6)
    check(xl.nn.CosineSimilarity()(x, y), torch.nn.CosineSimilarity()(t, u), 1e-5, 1e-6)


def test_loss_module_in_a_python_model():
    """A loss module as a child of a Model: it has no parameters, and gradients reach the model's."""
    class Model(xl.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = xl.nn.Linear(4, 3)
            self.loss = xl.nn.CrossEntropyLoss(label_smoothing=0.1)

        def forward(self, x, y):
            return self.loss(self.fc(x), y)

    m = Model()
    assert [n for n, _ in m.named_parameters()] == ["fc.weight", "fc.bias"]
    x, _ = pair((5, 4), "float32", seed=47)
    m(x, xl.tensor([0, 1, 2, 1, 0])).backward()
    assert m.fc.weight.grad is not None and np.abs(np.asarray(m.fc.weight.grad)).sum() > 0


# --------------------------------------------------------------------------------------------------------------
# Errors name the loss


@pytest.mark.parametrize("op, fn", [
    ("mse_loss", lambda: xl.nn.functional.mse_loss(xl.ones(2, 3), xl.ones(3, 2))),
    ("mse_loss", lambda: xl.nn.functional.mse_loss(xl.ones(2), xl.ones(2), reduction="avg")),
    ("l1_loss", lambda: xl.nn.functional.l1_loss(xl.ones(2), xl.ones(2), reduction="bad")),
    ("smooth_l1_loss", lambda: xl.nn.functional.smooth_l1_loss(xl.ones(2), xl.ones(2), beta=-1.0)),
    ("huber_loss", lambda: xl.nn.functional.huber_loss(xl.ones(2), xl.ones(2), delta=0.0)),
    ("binary_cross_entropy", lambda: xl.nn.functional.binary_cross_entropy(xl.ones(2), xl.ones(3))),
    ("binary_cross_entropy_with_logits",
     lambda: xl.nn.functional.binary_cross_entropy_with_logits(xl.ones(2), xl.ones(2, 1))),
    ("kl_div", lambda: xl.nn.functional.kl_div(xl.ones(2), xl.ones(3))),
    ("cross_entropy", lambda: xl.nn.functional.cross_entropy(xl.ones(2, 3), xl.ones(2))),  # float targets
    ("cross_entropy", lambda: xl.nn.functional.cross_entropy(xl.ones(2, 3), xl.tensor([0, 1, 2]))),
    ("cross_entropy", lambda: xl.nn.functional.cross_entropy(xl.ones(2, 3), xl.tensor([0, 1]), xl.ones(4))),
    ("cross_entropy", lambda: xl.nn.functional.cross_entropy(xl.ones(2, 3), xl.tensor([0, 1]), label_smoothing=1.5)),
    ("cross_entropy", lambda: xl.nn.functional.cross_entropy(xl.ones(2, 3), xl.tensor([0, 1]), reduction="max")),
    ("nll_loss", lambda: xl.nn.functional.nll_loss(xl.ones(2, 3), xl.tensor([[0, 1]]))),
    ("nll_loss", lambda: xl.nn.functional.nll_loss(xl.ones(2, 3), xl.tensor([True, False]))),
    ("nll_loss", lambda: xl.nn.functional.nll_loss(xl.ones(2, 3), xl.tensor([0, 1]), xl.ones(2))),
])
def test_loss_errors_name_the_loss(op, fn):
    with pytest.raises(xl.Error, match=r"\[" + op + r"\]"):
        result = fn()
        np.asarray(result)


# --------------------------------------------------------------------------------------------------------------
# xl.nn.functional: torch.nn.functional's names


def _functional_cases():
    return [
        ("softplus", [(3, 4)], (2.0, 5.0)),
        ("mish", [(3, 4)], ()),
        ("hardswish", [(3, 4)], ()),
        ("hardsigmoid", [(3, 4)], ()),
        ("elu", [(3, 4)], (0.5,)),
        ("leaky_relu", [(3, 4)], (0.2,)),
        ("glu", [(3, 4)], (1,)),
        ("dropout", [(3, 4)], (0.5, False)),
        ("conv1d", [(2, 4, 9), (6, 2, 3), (6,)], (2, 1, 1, 2)),
        ("conv_transpose2d", [(2, 4, 4, 5), (4, 3, 3, 3), (3,)], (2, 1, 1)),
        ("avg_pool1d", [(2, 3, 8)], (3, 2, 1)),
        ("max_pool1d", [(2, 3, 8)], (3, 2, 1)),
        ("adaptive_avg_pool2d", [(2, 3, 7, 9)], ((3, 4),)),
        ("mse_loss", [(3, 4), (3, 4)], ()),
        ("l1_loss", [(3, 4), (3, 4)], ()),
        ("cosine_similarity", [(3, 4), (3, 4)], (1,)),
        ("relu", [(3, 4)], ()),
        ("gelu", [(3, 4)], ()),
        ("silu", [(3, 4)], ()),
        ("softmax", [(3, 4)], (1,)),
        ("log_softmax", [(3, 4)], (-1,)),
        ("linear", [(3, 4), (5, 4), (5,)], ()),
        ("pad", [(3, 4)], ((1, 2),)),
    ]


@pytest.mark.parametrize("name, shapes, args", _functional_cases(), ids=[c[0] for c in _functional_cases()])
def test_functional_names_match_torch(name, shapes, args):
    fn = getattr(xl.nn.functional, name)
    pairs = [pair(s, "float32", seed=50 + i) for i, s in enumerate(shapes)]
    xs, ts = [p[0] for p in pairs], [p[1] for p in pairs]
    xargs = [list(a) if name == "pad" and isinstance(a, tuple) else a for a in args]  # xl.pad takes a list
    check(fn(*xs, *xargs), getattr(F, name)(*ts, *args), 1e-5, 1e-5)


def test_functional_interpolate():
    x, t = pair((2, 3, 4, 5), "float32", seed=60)
    check(xl.nn.functional.interpolate(x, (7, 9), "bilinear", False),
          F.interpolate(t, size=(7, 9), mode="bilinear", align_corners=False), 1e-5, 1e-5)
    check(xl.nn.functional.interpolate(x, size=(8, 10)), F.interpolate(t, size=(8, 10)), 1e-5, 1e-5)


# --------------------------------------------------------------------------------------------------------------
# Optimizers: 3 steps on a small model, against torch.optim

no_rmsprop = pytest.mark.skipif(not hasattr(xl.optim, "RMSprop"), reason="xl.optim.RMSprop is not bound yet")
no_adagrad = pytest.mark.skipif(not hasattr(xl.optim, "Adagrad"), reason="xl.optim.Adagrad is not bound yet")

OPTIMIZERS = [
    pytest.param("SGD", {"lr": 0.1, "momentum": 0.9}, id="SGD-momentum"),  # the harness, on an optimizer bound before
    pytest.param("Adam", {"lr": 0.01}, id="Adam"),
    pytest.param("RMSprop", {}, id="RMSprop-defaults", marks=no_rmsprop),
    pytest.param("RMSprop", {"lr": 0.01}, id="RMSprop", marks=no_rmsprop),
    pytest.param("RMSprop", {"lr": 0.01, "alpha": 0.9, "eps": 1e-6}, id="RMSprop-alpha-eps", marks=no_rmsprop),
    pytest.param("RMSprop", {"lr": 0.01, "momentum": 0.9}, id="RMSprop-momentum", marks=no_rmsprop),
    pytest.param("RMSprop", {"lr": 0.01, "centered": True}, id="RMSprop-centered", marks=no_rmsprop),
    pytest.param("RMSprop", {"lr": 0.005, "weight_decay": 0.1, "momentum": 0.5, "centered": True},
                 id="RMSprop-all", marks=no_rmsprop),
    pytest.param("Adagrad", {}, id="Adagrad-defaults", marks=no_adagrad),
    pytest.param("Adagrad", {"lr": 0.1}, id="Adagrad", marks=no_adagrad),
    pytest.param("Adagrad", {"lr": 0.1, "lr_decay": 0.5}, id="Adagrad-lr_decay", marks=no_adagrad),
    pytest.param("Adagrad", {"lr": 0.1, "weight_decay": 0.1}, id="Adagrad-weight_decay", marks=no_adagrad),
    pytest.param("Adagrad", {"lr": 0.1, "initial_accumulator_value": 0.5, "eps": 1e-6}, id="Adagrad-accumulator",
                 marks=no_adagrad),
]


def models(seed=0):
    """The same two-layer model in torch and in xlite (C++ Linear children of a Python module)."""
    torch.manual_seed(seed)
    tnet = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3))

    class Net(xl.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = xl.nn.Linear(4, 5)
            self.fc2 = xl.nn.Linear(5, 3)

        def forward(self, x):
            return self.fc2(xl.tanh(self.fc1(x)))

    xnet = Net()
    for mine, theirs in ((xnet.fc1, tnet[0]), (xnet.fc2, tnet[2])):
        mine.weight = xl.tensor(theirs.weight.detach().numpy())
        mine.bias = xl.tensor(theirs.bias.detach().numpy())
    return xnet, tnet


def batch(seed=1):
    x, t = pair((8, 4), "float32", seed=seed)
    y, u = pair((8, 3), "float32", seed=seed + 1)
    return x, t, y, u


# State tensors by xlite's state_dict name (".i" for parameter i) and torch's state key.
STATES = {"RMSprop": [("square_avg", "square_avg", {}), ("momentum_buffer", "momentum_buffer", {"momentum"}),
                      ("grad_avg", "grad_avg", {"centered"})],
          "Adagrad": [("sum", "sum", {})]}


@pytest.mark.parametrize("name, options", OPTIMIZERS)
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_optimizer_steps_match_torch(name, options, compiled):
    xnet, tnet = models()
    x, t, y, u = batch()
    opt = getattr(xl.optim, name)(xnet.parameters(), **options)
    topt = getattr(torch.optim, name)(tnet.parameters(), **options)
    assert opt.lr == pytest.approx(topt.param_groups[0]["lr"])

    step, torch_step = mse_training_steps(xnet, opt, tnet, topt, compiled)
    for i in range(3):
        loss = step(x, y)
        tloss = torch_step(t, u)
        assert loss.item() == pytest.approx(tloss.item(), rel=1e-5, abs=1e-7), f"step {i}"
        for (pname, p), q in zip(xnet.named_parameters(), tnet.parameters()):
            check(p, q, 1e-4, 1e-5)
    states = opt.state_dict()
    tparams = list(tnet.parameters())
    for mine, theirs, needs in STATES.get(name, []):
        if any(not options.get(n) for n in needs):
            continue
        for i, q in enumerate(tparams):
            check(states[f"{mine}.{i}"], topt.state[q][theirs], 1e-4, 1e-6)
    if name == "Adagrad":
        assert float(np.asarray(states["step"])) == 3.0


@no_rmsprop
@no_adagrad
@pytest.mark.parametrize("name", ["RMSprop", "Adagrad"])
def test_new_optimizers_follow_a_learning_rate_change(name):
    xnet, tnet = models(seed=2)
    x, t, y, u = batch(seed=3)
    opt = getattr(xl.optim, name)(xnet.parameters(), lr=0.05)
    topt = getattr(torch.optim, name)(tnet.parameters(), lr=0.05)
    for i in range(4):
        if i == 2:
            opt.lr = 0.01
            for group in topt.param_groups:
                group["lr"] = 0.01
        opt.zero_grad()
        xl.nn.functional.mse_loss(xnet(x), y).backward()
        opt.step()
        topt.zero_grad()
        F.mse_loss(tnet(t), u).backward()
        topt.step()
    assert opt.lr == pytest.approx(0.01)
    for p, q in zip(xnet.parameters(), tnet.parameters()):
        check(p, q, 1e-4, 1e-5)


@no_rmsprop
@no_adagrad
@pytest.mark.parametrize("make", [
    lambda ps: xl.optim.RMSprop(ps, alpha=1.5),
    lambda ps: xl.optim.RMSprop(ps, momentum=-0.1),
    lambda ps: xl.optim.Adagrad(ps, lr_decay=-1.0),
    lambda ps: xl.optim.Adagrad(ps, eps=-1.0),
])
def test_new_optimizers_refuse_bad_options(make):
    with pytest.raises(xl.Error, match=r"\[(RMSprop|Adagrad)\]"):
        make([xl.ones(2).requires_grad_()])


@no_rmsprop
def test_rmsprop_state_dict_round_trip():
    xnet, _ = models(seed=4)
    x, _, y, _ = batch(seed=5)
    opt = xl.optim.RMSprop(xnet.parameters(), lr=0.01, momentum=0.9, centered=True)
    for _ in range(2):
        opt.zero_grad()
        xl.nn.functional.mse_loss(xnet(x), y).backward()
        opt.step()
    saved = {k: xl.tensor(np.array(np.asarray(v))) for k, v in opt.state_dict().items()}
    assert {"lr", "square_avg.0", "grad_avg.0", "momentum_buffer.0"} <= set(saved)
    other = xl.optim.RMSprop(xnet.parameters(), lr=0.5, momentum=0.9, centered=True)
    other.load_state_dict(saved)
    assert other.lr == pytest.approx(0.01)
    for k, v in other.state_dict().items():
        np.testing.assert_array_equal(np.asarray(v), np.asarray(saved[k]))


def test_cross_entropy_whose_targets_are_all_ignored_is_nan_as_in_torch():
    x, t = pair((3, 4), "float32", -3, 3, seed=9)
    target = np.full(3, -100, dtype=np.int64)
    want = F.cross_entropy(t, torch.from_numpy(target))
    got = xl.nn.cross_entropy(x, xl.tensor(target))
    assert np.isnan(want.item()) and np.isnan(got.item())
