"""The module against the command line (byte for byte), and its errors and checks."""
import json
import subprocess

import numpy as np
import pytest

import poolspec


def run_command(command, *args):
    done = subprocess.run([command, *args], capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


PROBLEMS = [
    "avg:f32:n1c2:h5w5:k3x3:s2x2:pb1x1:pe1x1:include_clip:ceil",
    "avg:f64:n2c1:w7:k3:s2:pb1:pe2:exclude:floor",
    "avg:f16:n1c3:h4w6:k2x3:s1x2:pb0x1:pe0x1:include_full:ceil",
    "avg:i8:n1c2:h5w5:k2x2:s2x2:pb0x0:pe1x1:exclude:ceil:round=half_away",
    "max:f32:n1c2:h6w6:k3x3:s2x2:dl2x1:pb1x1:pe1x1:floor:idx=plane",
    "max:u8:n1c1:d3h4w4:k2x2x2:s1x2x2:pb0x0x0:pe0x0x0:floor:idx=tensor",
    "max:f32:n1c1:w5:k2:s2:pb1:pe1:ceil:empty=-inf:nan=propagate",
]


def ramp(p, seed=0):
    rng = np.random.default_rng(seed)
    shape = p.input_shape
    dtype = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i8": np.int8,
             "u8": np.uint8}[p.dtype]
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
    return rng.standard_normal(size=shape).astype(dtype)


@pytest.mark.parametrize("text", PROBLEMS)
def test_evaluate_is_byte_identical_to_the_command(text, tmp_path, poolspec_command):
    p = poolspec.problem(text)
    x = ramp(p)
    np.save(tmp_path / "x.npy", x)
    args = ["run", text, "--input", str(tmp_path / "x.npy"), "--output", str(tmp_path / "y.npy")]
    if p.has_indices:
        args += ["--indices", str(tmp_path / "i.npy")]
    code, _, err = run_command(poolspec_command, *args)
    assert code == 0, err
    want = np.load(tmp_path / "y.npy")
    if p.has_indices:
        got, indices = poolspec.evaluate(p, x, return_indices=True)
        assert indices.tobytes() == np.load(tmp_path / "i.npy").tobytes()
    else:
        got = poolspec.evaluate(p, x)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("framework,attributes,op,shape", [
    ("onnx", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1), "avg", (1, 1, 4, 4)),
    ("pytorch", dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=True), "avg", (1, 1, 4, 4)),
    ("openvino", 'auto_pad="same_upper" exclude-pad="true" kernel="2,2" strides="2,2"', "avg", (1, 3, 32, 32)),
    ("tensorflow", dict(ksize=3, strides=2, padding="SAME"), "max", (1, 7, 7, 2)),
    ("tflite", dict(padding="VALID", stride_w=2, stride_h=2, filter_width=2, filter_height=2), "avg", (1, 6, 6, 3)),
    ("onednn", dict(alg="pooling_avg_include_padding", kernel=[3, 3], strides=[2, 2], padding_l=[1, 1], padding_r=[1, 1]), "avg", (1, 2, 5, 5)),
])
def test_framework_problems_resolve_as_the_command_does(framework, attributes, op, shape, poolspec_command):
    p = poolspec.problem(op=op, input_shape=shape, **{framework: attributes})
    text = poolspec._attribute_text(attributes)
    code, out, err = run_command(poolspec_command, "shape", "--op", op, "--input-shape",
                                 ",".join(map(str, shape)), f"--{framework}", text, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert p.string == doc["problem"]
    assert list(poolspec.shape(p).output_shape) == doc["output_shape"]


def test_channels_last_frameworks_take_and_give_their_layout():
    p = poolspec.problem(op="max", tensorflow="ksize=2 strides=2 padding=VALID", input_shape=(1, 4, 4, 3))
    assert p.channels_last and p.output_shape == [1, 2, 2, 3]
    x = np.arange(48, dtype=np.float32).reshape(1, 4, 4, 3)
    y = poolspec.evaluate(p, x)
    assert y.shape == (1, 2, 2, 3)
    assert y[0, 0, 0].tolist() == [15.0, 16.0, 17.0]  # the channel's max over rows 0-1, cols 0-1
    assert poolspec.check(p, x, y).ok


def test_errors_name_the_attribute_its_value_and_the_rule():
    with pytest.raises(poolspec.Error, match=r"kernel\[0\]=0"):
        poolspec.problem("avg:f32:n1c1:w4:k0:s1:pb0:pe0:exclude:floor")
    with pytest.raises(poolspec.Error, match=r"strides\[1\]=0"):
        poolspec.problem(op="avg", openvino='kernel="2,2" strides="1,0" pads_begin="0,0" pads_end="0,0" exclude-pad="true"',
                         input_shape=(1, 1, 4, 4))
    with pytest.raises(poolspec.Error, match="op: required"):
        poolspec.problem(onnx=dict(kernel_shape=[2, 2]), input_shape=(1, 1, 4, 4))
    with pytest.raises(poolspec.Error, match="caffe: not a framework"):
        poolspec.problem(op="avg", caffe="kernel=2", input_shape=(1, 1, 4, 4))
    p = poolspec.problem("avg:f32:n1c1:h4w4:k2x2:s2x2:pb0x0:pe0x0:exclude:floor")
    with pytest.raises(poolspec.Error, match=r"x: dtype float64, the problem's is f32"):
        poolspec.evaluate(p, np.zeros((1, 1, 4, 4)))
    with pytest.raises(poolspec.Error, match=r"x: shape \(1,1,4,5\), the problem's is \(1,1,4,4\)"):
        poolspec.evaluate(p, np.zeros((1, 1, 4, 5), np.float32))
    with pytest.raises(poolspec.Error, match="accumulation.extra_operations=1000: must be 0..16"):
        poolspec.check(p, np.zeros((1, 1, 4, 4), np.float32), np.zeros((1, 1, 2, 2), np.float32),
                       accumulation=dict(sum_format="f32", extra_operations=1000))
    assert issubclass(poolspec.Error, ValueError)


def test_check_finds_a_wrong_element_and_says_where():
    p = poolspec.problem("avg:f32:n1c2:h6w6:k3x3:s1x1:pb1x1:pe1x1:exclude:floor")
    x = ramp(p, 3)
    y = poolspec.evaluate(p, x)
    assert poolspec.check(p, x, y).ok
    assert poolspec.check(p, x, y, sample=8).checked_elements == 8
    wrong = y.copy()
    wrong[0, 1, 5, 0] += 1e-3
    r = poolspec.check(p, x, wrong)
    assert not r.ok and r.mismatch_count == 1
    assert r.mismatches[0].coordinate == (0, 1, 5, 0)
    assert r.mismatches[0].expected == float(y[0, 1, 5, 0])
    # f32 sums allow a few ulps, not a thousandth.
    assert not poolspec.check(p, x, wrong, accumulation="f32").ok
    nudged = y.copy()
    nudged[0, 0, 2, 2] = np.nextafter(y[0, 0, 2, 2], np.float32(np.inf))
    assert not poolspec.check(p, x, nudged).ok
    assert poolspec.check(p, x, nudged, accumulation="f32").ok
    with pytest.raises(AssertionError, match=r"at \(0,1,5,0\): expected .* allowed .*\nreplay: poolspec run"):
        poolspec.assert_matches(p, x, wrong)


def test_max_indices_are_checked():
    p = poolspec.problem("max:f32:n1c1:h4w4:k2x2:s2x2:pb0x0:pe0x0:floor:idx=plane")
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    y, i = poolspec.evaluate(p, x, return_indices=True)
    assert i.tolist() == [[[[5, 7], [13, 15]]]]
    assert poolspec.check(p, x, y, indices=i).ok
    i[0, 0, 1, 1] = 14
    r = poolspec.check(p, x, y, indices=i)
    assert not r.ok and r.mismatches[0].got_index == 14 and r.mismatches[0].expected_index == 15


def test_explain_gives_the_window():
    p = poolspec.problem("avg:f32:n1c1:h4w4:k3x3:s2x2:pb1x1:pe1x1:include_clip:ceil")
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    e = poolspec.explain(p, x, at=(0, 0, 0, 2))
    assert e.output_coordinate == (0, 0, 0, 2)
    assert len(e.taps) == 9 and sum(t.kind == "input" for t in e.taps) == e.in_bounds == 2
    assert e.divisor == e.in_padded_extent == 6 and e.result == float(poolspec.evaluate(p, x)[0, 0, 0, 2])
    assert {t.kind for t in e.taps} == {"input", "pad_begin", "pad_end", "overhang"}
