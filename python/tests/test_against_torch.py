"""The spec against PyTorch itself (Debian's python3-torch, ATen's CPU kernels) on random problems
of every rank, both ops, dilation, ceil mode, count_include_pad and divisor_override, contiguous
and channels_last: poolspec's pytorch rules must give torch's output shapes, its max values and
indices bit for bit, and its averages within the bound of float sums."""
import random

import numpy as np
import pytest

import poolspec

torch = pytest.importorskip("torch")
F = torch.nn.functional


def random_problem(rng):
    rank = rng.choice([1, 2, 2, 3])
    op = rng.choice(["avg", "max"])
    kernel = [rng.randint(1, 4) for _ in range(rank)]
    stride = [rng.randint(1, 3) for _ in range(rank)]
    padding = [rng.randint(0, k // 2) for k in kernel]  # torch: at most half the kernel
    dilation = [rng.randint(1, 2) if op == "max" else 1 for _ in range(rank)]
    spatial = [rng.randint((k - 1) * d + 1, 9) for k, d in zip(kernel, dilation)]
    args = dict(kernel_size=tuple(kernel), stride=tuple(stride), padding=tuple(padding),
                ceil_mode=rng.random() < 0.5)
    if op == "max":
        args.update(dilation=tuple(dilation), return_indices=rng.random() < 0.5)
    else:
        args.update(count_include_pad=rng.random() < 0.5)
        if rank > 1 and rng.random() < 0.2:
            args.update(divisor_override=rng.randint(1, 5))
    shape = (rng.randint(1, 2), rng.randint(1, 4), *spatial)
    return op, rank, args, shape


def pytorch_text(args):
    def spell(v):
        if isinstance(v, bool):
            return str(v)
        if isinstance(v, tuple):
            return "(" + ",".join(map(str, v)) + ")"
        return str(v)
    return " ".join(f"{k}={spell(v)}" for k, v in args.items())


@pytest.mark.parametrize("seed", range(200))
def test_random_problem_matches_torch(seed):
    rng = random.Random(seed)
    op, rank, args, shape = random_problem(rng)
    x = torch.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))
    if rank == 2 and seed % 3 == 0:
        x = x.contiguous(memory_format=torch.channels_last)
    function = getattr(F, f"{op}_pool{rank}d")
    got = function(x, **args)
    p = poolspec.problem(op=op, pytorch=pytorch_text(args), input_shape=x.shape)
    y = got[0] if isinstance(got, tuple) else got
    assert tuple(p.output_shape) == tuple(y.shape), p.string
    if op == "max":
        indices = got[1] if isinstance(got, tuple) else None
        poolspec.assert_matches(p, x, y, indices=indices)
        want = poolspec.evaluate(p, x)
        assert torch.equal(want, y)
    else:
        poolspec.assert_matches(p, x, y, accumulation="f32")
        # and sampled, reading the tensors where they are
        poolspec.assert_matches(p, x, y, accumulation="f32", sample=8, seed=seed)


def test_a_wrong_torch_output_is_caught():
    x = torch.randn(1, 2, 7, 7)
    y = F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)
    p = poolspec.problem(op="avg", pytorch="kernel_size=3 stride=2 padding=1 ceil_mode=True count_include_pad=True",
                         input_shape=x.shape)
    r = poolspec.check(p, x, y, accumulation="f32")
    assert not r.ok and r.mismatch_count > 0  # it counted padding; torch here did not


def test_bf16_and_f16_tensors():
    x = torch.randn(1, 3, 8, 8)
    for dtype in (torch.bfloat16, torch.float64):
        xt = x.to(dtype)
        y = F.max_pool2d(xt, 2)
        p = poolspec.problem(op="max", pytorch="kernel_size=2", input_shape=xt.shape, dtype=xt.dtype)
        poolspec.assert_matches(p, xt, y)
        assert torch.equal(poolspec.evaluate(p, xt), y)


def test_tensors_that_cannot_be_read_are_refused_in_torch_words():
    p = poolspec.problem(op="max", pytorch="kernel_size=2", input_shape=(1, 1, 4, 4))
    with pytest.raises(poolspec.Error, match=r"x: dtype torch.bfloat16, the problem's is f32"):
        poolspec.evaluate(p, torch.zeros(1, 1, 4, 4, dtype=torch.bfloat16))
    with pytest.raises(poolspec.Error, match=r"x: a meta strided tensor has no dense data"):
        poolspec.evaluate(p, torch.empty(1, 1, 4, 4, device="meta"))
