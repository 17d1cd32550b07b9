"""Views share storage as in PyTorch: each sequence of view ops and in-place ops below runs on torch and on
xlite (the same code, `m` is the module), and every tensor it returns must hold the same values afterwards."""
import numpy as np
import pytest
import torch

import xlite as xl


def base(m):
    return m.arange(12, dtype=m.float32).reshape(3, 4)


def write_into_slice(m):
    b = base(m)
    v = b[1:, 1:3]
    v.mul_(10)
    return b, v


def base_update_seen_by_views(m):
    b = base(m)
    v, r, e = b.t(), b[2], b[:1].expand(2, 4)
    b.add_(1)
    return v, r, e


def chain_of_views(m):
    b = base(m)
    v = b.view(2, 6)[:, ::2].unsqueeze(0)
    v[0, 1, 2] = -1
    v.add_(0.5)
    return b, v


def views_see_each_other(m):
    b = base(m)
    a, c = b[:, 0], b[0]
    a.fill_(7)
    return b, c


def write_through_transpose(m):
    b = base(m)
    t = b.transpose(0, 1)
    t[1].zero_()
    t[2] += 5
    return b, t


def select_narrow_and_copy(m):
    b = base(m)
    b.select(1, 2).sub_(100)
    b.narrow(0, 1, 2).narrow(1, 0, 1).copy_(m.tensor([[5.0], [6.0]]))
    return (b,)


def detach_shares_storage(m):
    b = base(m)
    d = b.detach()
    d[0, 0] = 42
    b[2, 3] = -42
    return b, d


def reshape_views_and_copies(m):
    b = base(m).reshape(1, 3, 4)
    s = b.squeeze(0)
    f = s.flatten()
    f[5] = 99
    b.reshape(12)[0] = -7
    r = b.squeeze(0).t().reshape(12)  # strides cannot say this: a copy
    r.fill_(0)
    return b, s, f, r


def write_after_base_update(m):
    b = base(m)
    v = b[::2]
    b.mul_(-1)
    v.add_(1)
    return b, v


def permute_and_unsqueeze(m):
    b = base(m)
    p = b.unsqueeze(2).permute(2, 1, 0)
    p[0, 3].fill_(-3)
    return b, p


def split_and_chunk_parts(m):
    b = base(m)
    x, y = b.split(2, dim=1)
    y.mul_(2)
    x[0, 0] = 100
    first, *_ = b.chunk(3)
    first.mul_(-1)
    return (b,)


def contiguous_copies_only_when_needed(m):
    b = base(m)
    c = b.contiguous()
    c[0, 0] = 5
    t = b.t().contiguous()
    t[0, 0] = -5
    return b, t, m.tensor([b.is_contiguous(), b.t().is_contiguous(), b[:, 1:].is_contiguous()])


def ellipsis_and_none(m):
    b = base(m)
    v = b[..., 1:3][None]
    v[0, 2] = m.tensor([-1.0, -2.0])
    return b, v


CASES = [
    write_into_slice,
    base_update_seen_by_views,
    chain_of_views,
    views_see_each_other,
    write_through_transpose,
    select_narrow_and_copy,
    detach_shares_storage,
    reshape_views_and_copies,
    write_after_base_update,
    permute_and_unsqueeze,
    split_and_chunk_parts,
    contiguous_copies_only_when_needed,
    ellipsis_and_none,
]


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_view_sequences_match_torch(case):
    expected = case(torch)
    got = case(xl)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert tuple(g.shape) == tuple(e.shape)
        np.testing.assert_array_equal(np.asarray(g), e.numpy())


def test_view_of_non_contiguous_is_refused_as_in_torch():
    with pytest.raises(xl.Error, match="view size"):
        base(xl).t().view(12)
    with pytest.raises(RuntimeError):
        base(torch).t().view(12)


def test_gradient_flows_through_a_write_into_a_view():
    def run(m, x, s):
        y = x * 1.0
        y[:, 1:3] = s * 3.0
        y[0].mul_(2.0)
        return (y.t().reshape(-1) ** 2).sum()

    xv = np.arange(12, dtype=np.float64).reshape(3, 4) / 7
    sv = np.arange(6, dtype=np.float64).reshape(3, 2) / 5
    tx, ts = torch.tensor(xv, requires_grad=True), torch.tensor(sv, requires_grad=True)
    run(torch, tx, ts).backward()
    x, s = xl.tensor(xv).requires_grad_(), xl.tensor(sv).requires_grad_()
    run(xl, x, s).backward()
    np.testing.assert_allclose(np.asarray(x.grad), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(s.grad), ts.grad.numpy(), rtol=1e-12)
