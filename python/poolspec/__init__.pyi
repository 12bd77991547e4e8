# Typed stubs of the poolspec package (docs/python.md).
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, Tuple, Union

__version__: str
FRAMEWORKS: Tuple[str, ...]
MAX_ELEMENTS: int
MAX_TAP_VISITS: int
MAX_TAPS: int

class Error(ValueError):
    """Bad input: the message names the attribute, its value and the rule."""

class Problem:
    """A resolved pooling problem and how its framework's tensors map onto the spec's."""
    @property
    def string(self) -> str: ...
    @property
    def op(self) -> str: ...
    @property
    def dtype(self) -> str: ...
    @property
    def input_shape(self) -> list[int]: ...
    @property
    def output_shape(self) -> list[int]: ...
    @property
    def channels_last(self) -> bool: ...
    @property
    def frontend(self) -> str: ...
    @property
    def operator_name(self) -> str: ...
    @property
    def has_indices(self) -> bool: ...

@dataclass(frozen=True)
class Shape:
    problem: str
    input_shape: Tuple[int, ...]
    output_shape: Tuple[int, ...]
    pads_begin: Tuple[int, ...]
    pads_end: Tuple[int, ...]
    empty_window: Optional[Mapping[str, int]]
    valid: bool

@dataclass(frozen=True)
class Tap:
    offset: Tuple[int, ...]
    coordinate: Tuple[int, ...]
    kind: str
    value: Optional[float]

@dataclass(frozen=True)
class Explanation:
    output_coordinate: Tuple[int, ...]
    taps: Tuple[Tap, ...]
    in_bounds: int
    in_padded_extent: int
    divisor: Optional[int]
    exact_value: str
    result: float
    index: Optional[int]
    rule: str

@dataclass(frozen=True)
class Mismatch:
    coordinate: Tuple[int, ...]
    expected: float
    got: float
    error: float
    allowed: float
    error_ulps: float
    expected_index: int
    got_index: int

@dataclass(frozen=True)
class CheckResult:
    ok: bool
    problem: str
    checked_elements: int
    mismatch_count: int
    mismatches: Tuple[Mismatch, ...]
    bound: str
    text: str
    replay: str
    def __bool__(self) -> bool: ...

def problem(text: Optional[str] = ..., *, op: Optional[str] = ...,
            input_shape: Optional[Sequence[int]] = ..., dtype: Any = ...,
            opset: Optional[int] = ...,
            **framework: Union[str, Mapping[str, Any]]) -> Problem: ...
def shape(p: Union[Problem, str]) -> Shape: ...
def evaluate(p: Union[Problem, str], x: Any, *, return_indices: bool = ...,
             max_elements: int = ..., max_tap_visits: int = ...) -> Any: ...
def explain(p: Union[Problem, str], x: Any, at: Sequence[int], *,
            max_taps: int = ...) -> Explanation: ...
def check(p: Union[Problem, str], x: Any, y: Any, *, indices: Any = ...,
          accumulation: Union[str, Mapping[str, Any]] = ..., sample: Optional[int] = ...,
          seed: int = ..., max_elements: int = ..., max_tap_visits: int = ...) -> CheckResult: ...
def assert_matches(p: Union[Problem, str], x: Any, y: Any, **options: Any) -> CheckResult: ...

@dataclass(frozen=True)
class FrameworkRow:
    framework: str
    attributes: str
    expressible: bool
    reason: str
    operator: str
    problem: str
    output_shape: Tuple[int, ...]
    values: Any
    differing_outputs: int
    largest_difference: float
    first_difference: str
    @property
    def agrees(self) -> bool: ...

def diff(*, op: str, input_shape: Sequence[int], dtype: Any = ..., opset: Optional[int] = ...,
         x: Any = ..., max_elements: int = ..., max_tap_visits: int = ...,
         **framework: Union[str, Mapping[str, Any]]) -> Tuple[FrameworkRow, ...]: ...
