"""poolspec: the executable, machine-checked specification of pooling, from Python.

Problems in any framework's own spelling, their exact outputs, one element explained, and the
check of an implementation's output against the spec within a derived error bound::

    import poolspec, torch
    x = torch.randn(1, 3, 9, 9)
    p = poolspec.problem(op="max", pytorch=dict(kernel_size=3, stride=2, ceil_mode=True),
                         input_shape=x.shape)
    poolspec.assert_matches(p, x, torch.nn.functional.max_pool2d(x, 3, 2, ceil_mode=True))

Tensors are NumPy arrays or anything NumPy can read (``__array__``, DLPack): PyTorch tensors on
the CPU, channels_last ones included, are read where they are. docs/python.md has the whole API.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import shlex
from typing import Any, Iterable, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _poolspec
from ._poolspec import Error

__all__ = [
    "Error",
    "Problem",
    "Shape",
    "Explanation",
    "CheckResult",
    "Mismatch",
    "FRAMEWORKS",
    "problem",
    "shape",
    "evaluate",
    "run_xs3",
    "explain",
    "check",
    "assert_matches",
    "diff",
    "FrameworkRow",
    "MAX_ELEMENTS",
    "MAX_TAP_VISITS",
    "MAX_TAPS",
    "__version__",
]

__version__: str = _poolspec.__version__

Problem = _poolspec.Problem

#: The frameworks whose attributes ``problem`` takes, as keyword arguments of these names (and
#: ``xs3``: an XS3 (lib_nn) operator, whose attributes name the operator).
FRAMEWORKS = ("ngraph", "openvino", "onnx", "pytorch", "tensorflow", "tflite", "onednn", "opencv",
              "armnn", "tosa", "stablehlo")

_DTYPES = {
    np.dtype(np.float64): "f64",
    np.dtype(np.float32): "f32",
    np.dtype(np.float16): "f16",
    np.dtype(np.int32): "i32",
    np.dtype(np.int8): "i8",
    np.dtype(np.uint8): "u8",
}


#: The sizes the functions that compute allow by default, as the command line's do: a larger
#: problem is refused before any work (each function takes them as keyword arguments).
MAX_ELEMENTS = 1 << 28  # the input's and the output's elements
MAX_TAP_VISITS = 1 << 32  # the evaluation's work (minutes of exact arithmetic)
MAX_TAPS = 100_000  # the taps explain lists


def _integer(value: Any, name: str, low: int = -(1 << 63), high: int = (1 << 63) - 1) -> int:
    """An integer argument: an int (or NumPy integer), not a bool, a float or a string, and
    within [low, high]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise Error(f"{name}={value!r}: must be an integer")
    if not low <= int(value) <= high:
        raise Error(f"{name}={value}: must be {low}..{high}")
    return int(value)


def _integers(values: Any, name: str) -> list:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise Error(f"{name}={values!r}: must be a sequence of integers")
    return [_integer(v, f"{name}[{i}]") for i, v in enumerate(values)]


def _attribute_text(attributes: Union[str, Mapping[str, Any]]) -> str:
    """A framework's attributes as text: a string as it is, a mapping as name="value" pairs
    (sequences of integers joined with commas, booleans as true/false; None and an empty
    sequence leave the attribute out, its default)."""
    if isinstance(attributes, str):
        return attributes
    if not isinstance(attributes, Mapping):
        raise Error(f"attributes {attributes!r}: must be a mapping of names to values, or the "
                    "attribute text")
    items = []
    for name, value in attributes.items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, numbers.Integral):
            text = str(int(value))
        elif name == "init_value" and isinstance(value, numbers.Real):  # StableHLO's: -inf
            text = repr(float(value))
        elif isinstance(value, str):
            text = value
        elif value is None:
            continue  # PyTorch's stride=None: the attribute's default
        elif isinstance(value, Iterable):
            # StableHLO's padding, [[low, high], ...], reads as the flat list.
            nested = name == "padding" and all(isinstance(row, (list, tuple)) for row in value)
            flat = [v for row in value for v in row] if nested else value
            text = ",".join(str(v) for v in _integers(flat, name))
            if not text:
                continue  # PyTorch's stride=[]: the default too
        else:
            raise Error(f"{name}={value!r}: must be an integer, a sequence of integers, a boolean "
                        "or a string")
        if '"' in text or "\n" in text:
            raise Error(f"{name}={text!r}: a value cannot hold a double quote or a line break")
        items.append(f'{name}="{text}"')
    return " ".join(items)


def problem(text: Optional[str] = None, *, op: Optional[str] = None,
            input_shape: Optional[Sequence[int]] = None, dtype: Optional[str] = None,
            opset: Optional[int] = None, **framework: Union[str, Mapping[str, Any]]) -> Problem:
    """A pooling problem: a problem string (``"avg:f32:n1c1:h4w4:k2x2:..."``), or one framework's
    attributes in its own spelling, as a mapping or as text, with the operator (avg, max,
    global_avg, global_max), the input's shape in the framework's layout and its dtype (f32 when
    not given; a NumPy dtype or a poolspec name)::

        problem(op="avg", onnx=dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], ceil_mode=1),
                input_shape=(1, 3, 32, 32))
        problem(op="max", openvino='kernel="2,2" strides="2,2" pads_begin="0,0" pads_end="0,0"',
                opset=8, input_shape=x.shape)

    input_shape is the framework's input with its batch: PyTorch's unbatched (C, H, W) call is
    one batch of it, (1, C, H, W). opset: OpenVINO's or ONNX's operator set (their default when
    not given). Raises poolspec.Error (a ValueError) naming the attribute, its value and the
    rule.
    """
    if text is not None:
        if framework or op is not None or input_shape is not None or dtype is not None or \
                opset is not None:
            raise Error("a problem string stands alone: give it, or a framework's attributes")
        if not isinstance(text, str):
            raise Error(f"problem {text!r}: a problem string, or keyword arguments")
        return _poolspec.problem_from_string(text)
    if "xs3" in framework:
        return _xs3_problem(op, input_shape, dtype, opset, **framework)
    unknown = sorted(k for k in framework if k not in FRAMEWORKS)
    if unknown:
        raise Error(f"{unknown[0]}: not a framework poolspec knows, nor an argument of problem "
                    f"({', '.join(FRAMEWORKS)})")
    if len(framework) != 1:
        raise Error("give a problem string or one framework's attributes "
                    f"({', '.join(FRAMEWORKS)}); got {sorted(framework) or 'none'}")
    (name, attributes), = framework.items()
    if op is None:
        raise Error("op: required with a framework's attributes (avg, max, global_avg or global_max)")
    if input_shape is None:
        raise Error("input_shape: required with a framework's attributes (in its layout)")
    if opset is not None:
        if name not in ("openvino", "onnx"):
            raise Error(f"opset={opset}: only with openvino or onnx (operator sets)")
        opset = _integer(opset, "opset", 1, (1 << 31) - 1)
    return _poolspec.problem_from_framework(name, _attribute_text(attributes), str(op),
                                            _integers(input_shape, "input_shape"),
                                            _dtype_name(dtype), opset or 0)


def _xs3_problem(op: Optional[str], input_shape: Optional[Sequence[int]], dtype: Any,
                 opset: Optional[int], **framework: Union[str, Mapping[str, Any]]) -> Problem:
    """An XS3 (lib_nn) operator on an (H, W, C) int8 image, as `poolspec run --xs3` takes it:
    ``xs3="op=avgpool2d window=3,3 start=0,0 stride=2,2"`` or the same as a mapping."""
    others = sorted(k for k in framework if k != "xs3")
    if others:
        raise Error(f"xs3 and {others[0]}: give one framework's attributes")
    if op is not None:
        raise Error(f"op={op}: an XS3 operator is named by its attributes' op= "
                    "(avgpool2d_global, avgpool2d, maxpool2d)")
    if opset is not None:
        raise Error(f"opset={opset}: only with openvino or onnx (operator sets)")
    if dtype is not None and _dtype_name(dtype) != "i8":
        raise Error(f"dtype={dtype}: XS3 operators take an int8 image")
    if input_shape is None:
        raise Error("input_shape: required with an XS3 operator (its image, (H, W, C))")
    return _poolspec.problem_from_xs3(_attribute_text(framework["xs3"]),
                                      _integers(input_shape, "input_shape"))


def _dtype_name(dtype: Any) -> str:
    if dtype is None:
        return "f32"
    if isinstance(dtype, str) and dtype in ("f64", "f32", "f16", "bf16", "i32", "i8", "u8"):
        return dtype
    if str(dtype) in ("torch.bfloat16", "bfloat16"):
        return "bf16"
    try:  # a NumPy dtype or its name, Python's float, or a PyTorch dtype by its name
        given = dtype if isinstance(dtype, (type, np.dtype)) else str(dtype).replace("torch.", "")
        return _DTYPES[np.dtype(given)]
    except (TypeError, KeyError):
        raise Error(f"dtype={dtype}: must be f64, f32, f16, bf16, i32, i8 or u8") from None


def _as_problem(p: Union[Problem, str]) -> Problem:
    if isinstance(p, str):
        return _poolspec.problem_from_string(p)
    if not isinstance(p, Problem):
        raise Error(f"problem {p!r}: a poolspec.Problem or a problem string")
    return p


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch")


def _torch() -> Any:
    import torch  # only when given a tensor

    return torch


def _tensor(x: Any, name: str, p: Problem) -> np.ndarray:
    """`_array`, after checking a PyTorch tensor's dtype against the problem's in PyTorch's
    words (its bfloat16 is read as int16 bits, which would otherwise be the name said)."""
    if _is_torch(x) and hasattr(x, "dtype") and _dtype_name_or_none(x.dtype) != p.dtype:
        raise Error(f"{name}: dtype {x.dtype}, the problem's is {p.dtype}")
    return _array(x, name)


def _dtype_name_or_none(dtype: Any) -> Optional[str]:
    try:
        return _dtype_name(dtype)
    except Error:
        return None


def _array(x: Any, name: str) -> np.ndarray:
    """A NumPy view of a tensor, without a copy where one is not needed: PyTorch tensors (their
    bfloat16 as its 16 bits, which is how poolspec reads bf16), then anything with __array__ or
    DLPack."""
    if isinstance(x, np.ndarray):
        return x
    if _is_torch(x):
        t = x.detach()
        if t.device.type == "meta" or t.layout != _torch().strided:
            raise Error(f"{name}: a {t.device.type} {str(t.layout).replace('torch.', '')} tensor "
                        "has no dense data to read")
        if t.device.type != "cpu":
            t = t.cpu()
        import torch  # only when given a tensor

        if t.dtype == torch.bfloat16:
            t = t.view(torch.int16)
        return t.numpy()
    if hasattr(x, "__array__"):
        return np.asarray(x)
    if hasattr(x, "__dlpack__"):
        return np.from_dlpack(x)
    raise Error(f"{name}: a {type(x).__name__}, not an array (NumPy, PyTorch, or anything with "
                "__array__ or __dlpack__)")


@dataclasses.dataclass(frozen=True)
class Shape:
    """What ``shape`` answers: the resolved problem string, the input and output shapes in the
    framework's layout, the pads, and the first window with nothing to average (or None)."""
    problem: str
    input_shape: Tuple[int, ...]
    output_shape: Tuple[int, ...]
    pads_begin: Tuple[int, ...]
    pads_end: Tuple[int, ...]
    empty_window: Optional[Mapping[str, int]]
    valid: bool


def shape(p: Union[Problem, str]) -> Shape:
    """The output shape, the pads and any empty window of a problem."""
    d = _poolspec.shape(_as_problem(p))
    return Shape(d["problem"], tuple(d["input_shape"]), tuple(d["output_shape"]),
                 tuple(d["pads_begin"]), tuple(d["pads_end"]), d["empty_window"], d["valid"])


def _like(y: np.ndarray, x: Any) -> Any:
    """`y` as the kind of tensor `x` is: a PyTorch tensor for a PyTorch one (channels_last when
    `x` is), else the NumPy array."""
    if not _is_torch(x):
        return y
    import torch

    if y.dtype == np.uint16:  # bf16 bits
        t = torch.from_numpy(y.view(np.int16)).view(torch.bfloat16)
    else:
        t = torch.from_numpy(y)
    if t.dim() == 4 and x.dim() == 4 and x.is_contiguous(memory_format=torch.channels_last) \
            and not x.is_contiguous():
        t = t.contiguous(memory_format=torch.channels_last)
    elif t.dim() == 5 and x.dim() == 5 and \
            x.is_contiguous(memory_format=torch.channels_last_3d) and not x.is_contiguous():
        t = t.contiguous(memory_format=torch.channels_last_3d)
    return t


def evaluate(p: Union[Problem, str], x: Any, *, return_indices: bool = False,
             max_elements: int = MAX_ELEMENTS, max_tap_visits: int = MAX_TAP_VISITS) -> Any:
    """The spec's exact output for input `x` (in the framework's layout and the problem's
    dtype): one rounding of the exact value per element. With return_indices, also the max's
    indices (int64), as the problem's index mode numbers them. A problem whose tensors pass
    max_elements or whose work passes max_tap_visits is refused before any work. The GIL is
    released while it computes (it cannot be interrupted: the limits keep it short)."""
    p = _as_problem(p)
    y, indices = _poolspec.evaluate(p, _tensor(x, "x", p),
                                    _integer(max_elements, "max_elements"),
                                    _integer(max_tap_visits, "max_tap_visits"))
    if return_indices:
        if indices is None:
            raise Error("return_indices: the problem has no indices output (idx= in its problem "
                        "string, return_indices=True for PyTorch)")
        return _like(y, x), _like(indices, x)
    return _like(y, x)


@dataclasses.dataclass(frozen=True)
class Tap:
    offset: Tuple[int, ...]
    coordinate: Tuple[int, ...]
    kind: str  # input, pad_begin, pad_end, overhang, or hole (StableHLO's base dilation)
    value: Optional[float]


@dataclasses.dataclass(frozen=True)
class Explanation:
    """One output element: its window's taps, the divisor, the exact value and the rule."""
    output_coordinate: Tuple[int, ...]
    taps: Tuple[Tap, ...]
    in_bounds: int
    in_padded_extent: int
    divisor: Optional[int]
    exact_value: str
    result: float
    index: Optional[int]
    rule: str


def run_xs3(p: Problem, x: Any, *, max_elements: int = MAX_ELEMENTS,
            max_tap_visits: int = MAX_TAP_VISITS) -> Any:
    """The lib_nn operator's own output on the (H, W, C) int8 image `x`, bit for bit (poolspec's
    model of the XS3 kernels: their rounding, saturation and accumulation), where ``evaluate``
    gives the spec's meaning of the operator. `p` from ``problem(xs3=...)``."""
    if not isinstance(p, Problem):
        raise Error(f"problem {p!r}: a poolspec.Problem from problem(xs3=...)")
    return _like(_poolspec.run_xs3(p, _tensor(x, "x", p), _integer(max_elements, "max_elements"),
                                   _integer(max_tap_visits, "max_tap_visits")), x)


def explain(p: Union[Problem, str], x: Any, at: Sequence[int], *,
            max_taps: int = MAX_TAPS, max_elements: int = MAX_ELEMENTS) -> Explanation:
    """One output element, `at` its coordinate in the framework's layout; a window of more than
    max_taps taps, or a problem input of more than max_elements elements, is refused before any
    work."""
    p = _as_problem(p)
    d = _poolspec.explain(p, _tensor(x, "x", p), _integers(at, "at"), _integer(max_taps, "max_taps"),
                          _integer(max_elements, "max_elements"))
    taps = tuple(Tap(tuple(t["offset"]), tuple(t["coordinate"]), t["kind"], t["value"])
                 for t in d["taps"])
    return Explanation(tuple(d["output_coordinate"]), taps, d["in_bounds"], d["in_padded_extent"],
                       d["divisor"], d["exact_value"], d["result"], d["index"], d["rule"])


@dataclasses.dataclass(frozen=True)
class Mismatch:
    coordinate: Tuple[int, ...]  # in the framework's layout
    expected: float
    got: float
    error: float
    allowed: float  # the derived bound (0: bit-exact)
    error_ulps: float
    expected_index: int  # max with indices, else -1
    got_index: int


@dataclasses.dataclass(frozen=True)
class CheckResult:
    """What ``check`` found: ok, the elements checked, the mismatches counted and the first few,
    the bound, the problem string and a command that replays it."""
    ok: bool
    problem: str
    checked_elements: int
    mismatch_count: int
    mismatches: Tuple[Mismatch, ...]
    bound: str
    text: str
    replay: str

    def __bool__(self) -> bool:
        return self.ok


_ACCUMULATIONS = {
    "exact": dict(sum_format="exact"),
    "f32": dict(sum_format="f32", extra_operations=1, output_ulps=0.5),
    "f64": dict(sum_format="f64", extra_operations=1, output_ulps=1.0),
    "f16": dict(sum_format="f16", extra_operations=1, output_ulps=0.5),
}


def check(p: Union[Problem, str], x: Any, y: Any, *, indices: Any = None,
          accumulation: Union[str, Mapping[str, Any]] = "exact", sample: Optional[int] = None,
          seed: int = 0, max_elements: int = MAX_ELEMENTS,
          max_tap_visits: int = MAX_TAP_VISITS) -> CheckResult:
    """Checks an implementation's output `y` (and max `indices`) for input `x` against the spec.

    accumulation: how the implementation sums a float average, from which the tolerance is
    derived: "exact" (correctly rounded, the default), "f64", "f32" or "f16" (sums in that
    format, one division, the quotient rounded once; f16 sums for f16 data only, and not under
    the problem's sums=f32), or a mapping
    with backend.h's fields (sum_format, extra_operations, output_ulps, integer_units), validated
    against their ranges. Max results and integer averages are compared bit for bit (up to the
    zeros a problem's zeros=either and subnormals=may_flush allow).
    sample: None (the default) compares every element with the spec's exact evaluation. N > 0
    checks N elements (half of them on the border), 0 every element, by the linked-in checker,
    which reads the tensors in place and is much faster; its float tolerance adds the reference
    engine's own rounding to the declared bound.
    max_elements, max_tap_visits: as for evaluate, which the exact comparison does.
    """
    p = _as_problem(p)
    if isinstance(accumulation, str) and accumulation in _ACCUMULATIONS:
        accumulation = _ACCUMULATIONS[accumulation]
    elif not isinstance(accumulation, Mapping):
        raise Error(f"accumulation={accumulation!r}: must be exact, f64, f32, f16 or a mapping of "
                    "sum_format, extra_operations, output_ulps and integer_units")
    samples = -1 if sample is None else _integer(sample, "sample", 0)
    d = _poolspec.check(p, _tensor(x, "x", p), _tensor(y, "y", p),
                        None if indices is None else _array(indices, "indices"), dict(accumulation),
                        samples, _integer(seed, "seed", 0, (1 << 64) - 1),
                        _integer(max_elements, "max_elements"),
                        _integer(max_tap_visits, "max_tap_visits"))
    mismatches = tuple(Mismatch(tuple(m["coordinate"]), m["expected"], m["got"], m["error"],
                                m["allowed"], m["error_ulps"], m["expected_index"],
                                m["got_index"]) for m in d["mismatches"])
    replay = (f"poolspec run {shlex.quote(d['problem'])} --input x.npy --output expected.npy"
              "   # x.npy: numpy.save('x.npy', x), in the spec's (N, C, spatial) order")
    return CheckResult(d["ok"], d["problem"], d["checked_elements"], d["mismatch_count"],
                       mismatches, d["bound"], d["text"], replay)


def assert_matches(p: Union[Problem, str], x: Any, y: Any, **options: Any) -> CheckResult:
    """``check``, raising an AssertionError that says what differs, where, by how much, against
    which bound, and how to replay it."""
    __tracebackhide__ = True  # pytest shows the caller's line, not this function's
    r = check(p, x, y, **options)
    if not r.ok:
        lines = [f"poolspec: {r.mismatch_count} of {r.checked_elements} checked elements differ "
                 f"from the spec ({r.bound})", f"problem: {r.problem}"]
        for m in r.mismatches:
            where = ",".join(str(c) for c in m.coordinate)
            index = "" if m.expected_index < 0 and m.got_index < 0 else \
                f"; index expected {m.expected_index}, got {m.got_index}"
            ulps = "" if math.isnan(m.error_ulps) or m.allowed == 0 else f" ({m.error_ulps:.3g} ulps)"
            lines.append(f"  at ({where}): expected {m.expected!r}, got {m.got!r}, error "
                         f"{m.error:.6g}{ulps}, allowed {m.allowed:.6g}{index}")
        lines.append(f"replay: {r.replay}")
        raise AssertionError("\n".join(lines))
    return r


@dataclasses.dataclass(frozen=True)
class FrameworkRow:
    """One framework's rules applied to the problem ``diff`` was given: the source first."""
    framework: str  # "pytorch", "onnx@22", "openvino@1", ...
    attributes: str  # the problem in that framework's own spelling
    expressible: bool
    reason: str  # why it cannot express the problem, when it cannot
    operator: str
    problem: str
    output_shape: Tuple[int, ...]  # spec order (N, C, o...)
    values: np.ndarray  # float64, spec order
    differing_outputs: int  # outputs that differ from the source's (-1: not comparable)
    largest_difference: float
    first_difference: str
    # The rule set's verdict: "invalid" (its rules refuse the problem), "unpredictable" (with
    # the reason: TOSA's REQUIRE), "defined", or "beyond the model" (its rules accept what
    # poolspec's problem model cannot state); None where the framework cannot express it.
    verdict: Optional[str]
    unpredictable: str

    @property
    def agrees(self) -> bool:
        return self.expressible and self.differing_outputs == 0


def diff(*, op: str, input_shape: Sequence[int], dtype: Any = None, opset: Optional[int] = None,
         x: Any = None, max_elements: int = MAX_ELEMENTS, max_tap_visits: int = MAX_TAP_VISITS,
         **framework: Union[str, Mapping[str, Any]]) -> Tuple[FrameworkRow, ...]:
    """The problem, given in one framework's terms, under every framework's rules that can
    express it, as `poolspec diff` evaluates it: on `x` (in the framework's layout) or a ramp
    1, 2, 3, ...: the source as given first, then every framework's translation (the source's
    own among them). Each evaluation is held to max_elements and max_tap_visits."""
    if "xs3" in framework:
        raise Error("xs3: diff sets frameworks' rules side by side, and no framework states an XS3 "
                    "operator's; run_xs3 and evaluate give its model and the spec's meaning")
    source = problem(op=op, input_shape=input_shape, dtype=dtype, opset=opset, **framework)
    (name, attributes), = framework.items()
    rows = _poolspec.diff(name, _attribute_text(attributes), str(op),
                          _integers(input_shape, "input_shape"), _dtype_name(dtype),
                          opset or 0, None if x is None else _tensor(x, "x", source),
                          _integer(max_elements, "max_elements"),
                          _integer(max_tap_visits, "max_tap_visits"))
    return tuple(FrameworkRow(r["framework"], r["attributes"], r["expressible"], r["reason"],
                              r["operator"], r["problem"], tuple(r["output_shape"]), r["values"],
                              r["differing_outputs"], r["largest_difference"],
                              r["first_difference"], r["verdict"], r["unpredictable"])
                 for r in rows)
