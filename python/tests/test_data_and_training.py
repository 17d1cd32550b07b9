"""xlite.utils.data, the normalisation and convolution modules, learning-rate schedules and the default dtype,
against PyTorch 1.13 where it has the same thing."""
import numpy as np
import pytest
import torch

import xlite as xl
from torch_compare import check, pair


def test_tensor_dataset_and_loader_batch_in_order_and_shuffle_by_seed():
    x = xl.arange(20).reshape(10, 2)
    y = xl.arange(10)
    loader = xl.utils.data.DataLoader(xl.utils.data.TensorDataset(x, y), batch_size=4)
    batches = list(loader)
    assert len(loader) == 3 and [tuple(b[0].shape) for b in batches] == [(4, 2), (4, 2), (2, 2)]
    assert [v for b in batches for v in b[1].tolist()] == list(range(10))
    shuffled = xl.utils.data.DataLoader(xl.utils.data.TensorDataset(x, y), batch_size=3, shuffle=True, generator=1,
                                        drop_last=True)
    first = [v for b in shuffled for v in b[1].tolist()]
    again = [v for b in xl.utils.data.DataLoader(xl.utils.data.TensorDataset(x, y), batch_size=3, shuffle=True,
                                                 generator=1, drop_last=True) for v in b[1].tolist()]
    assert len(first) == 9 and first == again and sorted(first) != first


def test_a_python_dataset_is_collated_and_split():
    class Squares(xl.utils.data.Dataset):
        def __len__(self):
            return 6

        def __getitem__(self, i):
            return {"x": float(i), "y": xl.tensor([i * i])}

    train, rest = xl.utils.data.random_split(Squares(), [4, 2], generator=0)
    assert len(train) == 4 and len(rest) == 2
    batch = next(iter(xl.utils.data.DataLoader(Squares(), batch_size=3)))
    assert batch["x"].tolist() == [0.0, 1.0, 2.0] and batch["y"].shape == (3, 1)
    with pytest.raises(xl.Error, match=r"\[random_split\]"):
        xl.utils.data.random_split(Squares(), [4, 3])


def test_batch_norm_matches_torch_in_train_and_eval():
    x, t = pair((4, 3, 2, 2), seed=3)
    ours, theirs = xl.nn.BatchNorm2d(3, momentum=0.2), torch.nn.BatchNorm2d(3, momentum=0.2)
    check(ours(x), theirs(t).detach(), 1e-5, 1e-5)
    check(ours.running_var, theirs.running_var, 1e-5, 1e-6)
    ours.eval()
    theirs.eval()
    check(ours(x), theirs(t).detach(), 1e-5, 1e-5)


def test_group_norm_instance_norm_and_convolution_modules():
    x, t = pair((2, 6, 5), seed=4)
    check(xl.nn.GroupNorm(3, 6)(x), torch.nn.GroupNorm(3, 6)(t).detach(), 1e-5, 1e-5)
    image, timage = pair((2, 3, 4, 4), seed=5)
    check(xl.nn.InstanceNorm2d(3)(image), torch.nn.InstanceNorm2d(3)(timage), 1e-5, 1e-5)
    conv = xl.nn.Conv1d(6, 4, 3, padding=1)
    assert conv(x).shape == (2, 4, 5)
    up = xl.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1)
    assert up(image).shape == (2, 2, 8, 8) and up.weight.shape == (3, 2, 3, 3)


@pytest.mark.parametrize("make, steps", [
    (lambda o, lib: lib.StepLR(o, 2, 0.5), 5),
    (lambda o, lib: lib.CosineAnnealingLR(o, 4, 0.01), 6),
    (lambda o, lib: lib.OneCycleLR(o, 1.0, 8), 7),
    (lambda o, lib: lib.LinearLR(o, 0.25, 1.0, 3), 4),
], ids=["step", "cosine", "one_cycle", "linear"])
def test_schedules_give_torchs_rates(make, steps):
    w = xl.zeros(1, requires_grad=True)
    ours = xl.optim.SGD([w], lr=0.1)
    p = torch.nn.Parameter(torch.zeros(1))
    theirs = torch.optim.SGD([p], lr=0.1)
    a, b = make(ours, xl.optim.lr_scheduler), make(theirs, torch.optim.lr_scheduler)
    for _ in range(steps):
        assert ours.lr == pytest.approx(theirs.param_groups[0]["lr"], rel=1e-9, abs=1e-12)
        theirs.step()
        a.step()
        b.step()
    assert a.get_last_lr()[0] == pytest.approx(b.get_last_lr()[0], rel=1e-9, abs=1e-12)


def test_reduce_on_plateau_reads_a_tensor_metric():
    w = xl.zeros(1, requires_grad=True)
    opt = xl.optim.SGD([w], lr=1.0)
    plateau = xl.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=0)
    for metric in (3.0, 3.0, xl.tensor(3.0)):
        plateau.step(metric)
    assert opt.lr == 0.25


def test_the_default_dtype_follows_torchs():
    assert xl.get_default_dtype() == xl.float32
    xl.set_default_dtype(xl.float64)
    try:
        assert xl.tensor(1.5).dtype == xl.float64 and xl.zeros(2).dtype == xl.float64
        assert (xl.tensor([1, 2]) * 0.5).dtype == xl.float64
    finally:
        xl.set_default_dtype(xl.float32)
    assert xl.tensor(1.5).dtype == xl.float32
    with pytest.raises(xl.Error, match=r"\[set_default_dtype\]"):
        xl.set_default_dtype(xl.int64)


def test_one_version():
    assert xl.__version__ == xl._xlite.version()
    import re
    import os
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "pyproject.toml")) as f:
        assert re.search(r'^version = "([^"]+)"', f.read(), re.M).group(1) == xl.__version__


def test_lion_follows_its_rule():
    w0 = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    w = xl.tensor(w0, requires_grad=True)
    opt = xl.optim.Lion([w], lr=0.1, betas=(0.9, 0.99), weight_decay=0.1)
    m = np.zeros(3)
    p = w0.astype(np.float64)
    for _ in range(3):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
        g = 2 * p
        update = np.sign(0.9 * m + 0.1 * g)
        p = p * (1 - 0.1 * 0.1) - 0.1 * update
        m = 0.99 * m + 0.01 * g
    np.testing.assert_allclose(np.asarray(w), p, rtol=1e-6)


def test_data_loader_prefetches_computed_batches_onto_the_device():
    x, y = xl.arange(20, dtype=xl.float32).reshape(10, 2), xl.arange(10)
    dataset = xl.utils.data.TensorDataset(x, y)
    target = xl.devices()[-1]
    batches = list(xl.utils.data.DataLoader(dataset, batch_size=4, device=target))
    assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert all(b[0].device == target and not b[0].is_pending for b in batches)
    same = [b[1].tolist() for b in xl.utils.data.DataLoader(dataset, batch_size=4, prefetch=0)]
    assert same == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_data_loader_raises_a_background_error_where_its_batch_is_reached():
    class Broken(xl.utils.data.Dataset):
        def __len__(self):
            return 6

        def __getitem__(self, i):
            if i == 4:
                raise ValueError("example 4 is broken")
            return xl.tensor([float(i)])

    seen = []
    with pytest.raises(ValueError, match="example 4 is broken"):
        for batch in xl.utils.data.DataLoader(Broken(), batch_size=2):
            seen.append(batch.tolist())
    assert seen == [[[0.0], [1.0]], [[2.0], [3.0]]]
    first = next(iter(xl.utils.data.DataLoader(Broken(), batch_size=2)))  # left early: its thread stops
    assert first.tolist() == [[0.0], [1.0]]
