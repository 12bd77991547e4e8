"""Run by test_plugin.py under the poolspec plugin: the first test pools correctly, the second
through a deliberately wrong kernel, which the plugin must catch."""
import pytest
import torch
import torch.nn.functional as F


@pytest.mark.poolspec
def test_pooling_that_is_right():
    x = torch.randn(2, 3, 9, 9)
    F.max_pool2d(x, 3, 2, 1, ceil_mode=True)
    F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)
    torch.nn.AvgPool1d(2)(torch.randn(1, 4, 7))


@pytest.mark.poolspec
def test_pooling_through_a_wrong_kernel(monkeypatch):
    # The ATen operator under torch.nn.functional.max_pool2d, replaced by a kernel whose
    # ceil-mode window at the edge repeats the one before it.
    real = torch.max_pool2d

    def mutant(*args, **kwargs):
        y = real(*args, **kwargs)
        y[..., -1] = y[..., -2]
        return y

    monkeypatch.setattr(torch, "max_pool2d", mutant)
    x = torch.arange(64, dtype=torch.float32).reshape(1, 1, 8, 8)
    F.max_pool2d(x, 3, 2, 0, ceil_mode=True)
