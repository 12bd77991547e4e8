"""poolspec's pytest plugin: every pooling call a test makes through torch.nn.functional (and so
through torch.nn's pooling modules) is checked against the spec, as the linked-in checks do in
C++. Loaded by its entry point (pytest11) where poolspec's metadata is found, or else with
``-p poolspec.pytest_plugin``; inert until asked:

- ``@pytest.mark.poolspec`` on a test, or its ``poolspec_torch`` fixture, checks that test's calls;
- ``--poolspec`` checks every test's calls;
- ``--poolspec-sample N``: elements the linked-in checker checks per call (default 0: every
  element; N: a spot check of N, half of them on the border, other ones on every call).

A call whose output differs from the spec fails the test there, with an AssertionError that
names the problem, the element, expected and got, the bound, and a command that replays it.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

import pytest

import poolspec

# torch.nn.functional's pooling functions and the names of their parameters, in order.
_MAX = ("input", "kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices")
_AVG1 = ("input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad")
_AVG = _AVG1 + ("divisor_override",)
_FUNCTIONS = {
    "max_pool1d": ("max", 1, _MAX),
    "max_pool2d": ("max", 2, _MAX),
    "max_pool3d": ("max", 3, _MAX),
    "avg_pool1d": ("avg", 1, _AVG1),
    "avg_pool2d": ("avg", 2, _AVG),
    "avg_pool3d": ("avg", 3, _AVG),
}
# How ATen sums an average on the CPU (float, double accumulation or float vectors): within the
# bound of f32 sums for the 32- and 16-bit floats, f64 sums for double.
_ACCUMULATION = {"f64": "f64", "f32": "f32", "f16": "f32", "bf16": "f32"}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("poolspec", "check pooling calls against the poolspec specification")
    group.addoption("--poolspec", action="store_true", default=False,
                    help="check every test's torch.nn.functional pooling calls against the spec")
    group.addoption("--poolspec-sample", type=int, default=0, metavar="N",
                    help="elements checked per call (0, the default: every element; N: a spot "
                         "check of N, half on the border)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "poolspec: check this test's torch.nn.functional pooling calls against the spec")


def _bind(names: Sequence[str], args: tuple, kwargs: Dict[str, Any]) -> Dict[str, Any]:
    bound = dict(zip(names, args))
    bound.update(kwargs)
    return bound


def _checked(name: str, original: Callable[..., Any], sample: int,
             calls: List[str]) -> Callable[..., Any]:
    import torch
    op, rank, names = _FUNCTIONS[name]

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # the failure shows at the test's call
        result = original(*args, **kwargs)
        if torch.jit.is_tracing() or torch.jit.is_scripting():
            return result  # a graph being recorded, not values to check
        a = _bind(names, args, kwargs)
        x = a["input"]
        if x.device.type == "meta" or x.layout != torch.strided:
            return result  # no dense values to check
        if x.dtype.is_complex or not (x.dtype.is_floating_point or op == "max"):
            return result  # a dtype the spec does not define for this op
        y, indices = (result if isinstance(result, tuple) else (result, None))
        batchless = x.dim() == rank + 1
        if batchless:  # (C, spatial...): one batch
            x, y = x.unsqueeze(0), y.unsqueeze(0)
            indices = None if indices is None else indices.unsqueeze(0)
        attributes = {k: v for k, v in a.items() if k != "input" and v is not None}
        for k, v in list(attributes.items()):
            if isinstance(v, bool):
                attributes[k] = "True" if v else "False"
            elif isinstance(v, (list, tuple)):
                attributes[k] = "(" + ",".join(str(int(i)) for i in v) + ")"
        text = " ".join(f"{k}={v}" for k, v in attributes.items())
        p = poolspec.problem(op=op, pytorch=text, input_shape=tuple(x.shape), dtype=x.dtype)
        calls.append(p.string)
        if tuple(y.shape) != tuple(p.output_shape):
            raise AssertionError(f"poolspec: torch.nn.functional.{name} gave an output of shape "
                                 f"{tuple(y.shape)}; the spec's is {tuple(p.output_shape)}\n"
                                 f"problem: {p.string}")
        poolspec.assert_matches(p, x, y, indices=indices,
                                accumulation=_ACCUMULATION.get(p.dtype, "exact") if op == "avg"
                                else "exact",
                                sample=sample, seed=len(calls))  # each call samples anew
        return result

    return wrapper


@pytest.fixture
def poolspec_torch(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[List[str]]:
    """Checks every torch.nn.functional pooling call the test makes; yields the list of the
    problem strings checked so far."""
    import torch.nn.functional as F

    sample = request.config.getoption("--poolspec-sample")
    calls: List[str] = []
    for name in _FUNCTIONS:
        monkeypatch.setattr(F, name, _checked(name, getattr(F, name), sample, calls))
    yield calls


def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    every = config.getoption("--poolspec")
    for item in items:
        if every or item.get_closest_marker("poolspec") is not None:
            item.fixturenames.insert(0, "poolspec_torch")
