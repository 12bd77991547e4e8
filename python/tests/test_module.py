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
    with pytest.raises(poolspec.Error, match="sum_format=POOLSPEC_F16 for an average of f32 data"):
        poolspec.check(p, np.zeros((1, 1, 4, 4), np.float32), np.zeros((1, 1, 2, 2), np.float32),
                       accumulation="f16")
    assert issubclass(poolspec.Error, ValueError)


def test_f16_sums_are_declared_for_f16_data():
    # 64 taps of 1 + 2^-10: summed in f16, the partial sums past 32 (ulp 2^-5) drop the 2^-10, so
    # the mean may come out 1, one f16 ulp below the exact 1 + 2^-10: within the bound of f16
    # sums (gamma(65) at u = 2^-11, about 0.03), not within f32 sums' (about half an ulp).
    p = poolspec.problem("avg:f16:n1c1:h8w8:k8x8:s1x1:pb0x0:pe0x0:exclude:floor")
    x = np.full((1, 1, 8, 8), 1 + 2**-10, np.float16)
    y = np.ones((1, 1, 1, 1), np.float16)
    assert poolspec.check(p, x, y, accumulation="f16")
    assert not poolspec.check(p, x, y, accumulation="f32")


def test_check_finds_a_wrong_element_and_says_where():
    p = poolspec.problem("avg:f32:n1c2:h6w6:k3x3:s1x1:pb1x1:pe1x1:exclude:floor")
    x = ramp(p, 3)
    y = poolspec.evaluate(p, x)
    assert poolspec.check(p, x, y).ok
    assert poolspec.check(p, x, y, sample=8).checked_elements == 8
    assert poolspec.check(p, x, y, sample=0).checked_elements == 72
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
    assert not poolspec.check(p, x, nudged).ok  # "exact" is bit for bit against the spec
    assert poolspec.check(p, x, nudged, accumulation="f32").ok
    # The linked-in checker finds the thousandth too, then counts with the exact comparison.
    r = poolspec.check(p, x, wrong, sample=0)
    assert not r.ok and r.mismatch_count == 1 and r.checked_elements == 72
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


def test_diff_places_the_frameworks_side_by_side(poolspec_command):
    rows = poolspec.diff(op="avg", input_shape=(1, 1, 4, 4),
                         pytorch=dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                      count_include_pad=True))
    code, out, _ = run_command(poolspec_command, "diff", "--op", "avg", "--input-shape", "1,1,4,4",
                               "--pytorch", poolspec._attribute_text(dict(
                                   kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                   count_include_pad=True)), "--json")
    doc = json.loads(out)
    assert [r.framework for r in rows] == [f["framework"] for f in doc["frameworks"]]
    by_name = {r.framework: r for r in rows}
    assert by_name["onnx@22"].agrees and not by_name["openvino@1"].agrees
    # The README's figures: the ceil overhang's divisor under INCL-CLIP and INCL-FULL.
    assert by_name["pytorch"].values[0, 0, 0].round(3).tolist() == [1.556, 3.333, 2.0]
    assert by_name["openvino@1"].values[0, 0, 0].round(3).tolist() == [1.556, 3.333, 1.333]
    assert not by_name["tensorflow"].expressible and by_name["tensorflow"].reason
    nan = poolspec.diff(op="max", input_shape=(1, 1, 4), pytorch="kernel_size=2 stride=1",
                        x=np.array([[[np.nan, 1, 3, 3]]], np.float32))
    assert np.isnan(nan[0].values[0, 0, 0]) and nan[1].values[0, 0, 0] == 1


def test_tosa_rules_and_their_verdicts():
    # TOSA AVG_POOL2D on int8 NHWC with zero points (values derived in
    # tests/conformance/test_framework_table.cpp): sum(x - input_zp) divided as TOSA divides, then
    # + output_zp.
    p = poolspec.problem(op="avg", tosa=dict(kernel=[2, 2], stride=[2, 2], pad=[0, 0, 0, 0],
                                             acc_type="INT32", input_zp=-3, output_zp=5),
                         input_shape=(1, 4, 4, 1), dtype="i8")
    assert "round=tosa:input_zp=-3:output_zp=5" in p.string
    x = (np.arange(-8, 8).reshape(1, 4, 4, 1) * 15).astype(np.int8)
    assert poolspec.evaluate(p, x).reshape(-1).tolist() == [-75, -45, 46, 76]
    # An ERROR_IF of the specification is a refusal that names the attribute: the problem is
    # invalid, and diff says so beside the frameworks that accept it.
    with pytest.raises(poolspec.Error, match="not a multiple of the stride"):
        poolspec.problem(op="avg", tosa="kernel=3,3 stride=2,2 pad=0,0,0,0",
                         input_shape=(1, 4, 4, 1))
    rows = {r.framework: r for r in poolspec.diff(op="avg", input_shape=(1, 1, 4, 4),
                                                   onnx="kernel_shape=3,3 strides=2,2")}
    assert rows["tosa"].verdict == "invalid" and not rows["tosa"].expressible
    assert rows["onnx@22"].verdict == "defined"


def test_stablehlo_reduce_window_as_pooling():
    # A negative low pad crops, divisor=count counts input elements only (values derived in
    # tests/conformance/test_framework_table.cpp): {2, 3} / 2, {4, 5} / 2, {pad, pad} 0 / 0.
    p = poolspec.problem(op="avg", stablehlo=dict(
        window_dimensions=[1, 1, 1, 2], window_strides=[1, 1, 1, 2],
        padding=[[0, 0], [0, 0], [0, 0], [-1, 2]], divisor="count"), input_shape=(1, 1, 1, 5))
    x = np.arange(1, 6, dtype=np.float32).reshape(1, 1, 1, 5)
    y = poolspec.evaluate(p, x).reshape(-1)
    assert y[:2].tolist() == [2.5, 4.5] and np.isnan(y[2])
    m = poolspec.problem(op="max", stablehlo=dict(window_dimensions=[1, 2, 1],
                                                  init_value=float("-inf")),
                         input_shape=(1, 3, 1))
    assert poolspec.evaluate(m, np.array([[[1], [3], [2]]], np.float32)).reshape(-1).tolist() == [3, 3]
    # Base dilation 3: 1, h, h, 2, h, h, 3 with holes of -inf; windows of 2 (the values derived in
    # tests/conformance/test_framework_table.cpp). explain names a tap on a hole and maps an
    # element's tap back to the framework's coordinate.
    d = poolspec.problem(op="max", stablehlo="window_dimensions=1,1,2 base_dilations=1,1,3",
                         input_shape=(1, 1, 3))
    x3 = np.array([[[1, 2, 3]]], np.float32)
    assert poolspec.evaluate(d, x3).reshape(-1).tolist() == [1, -np.inf, 2, 2, -np.inf, 3]
    assert [t.kind for t in poolspec.explain(d, x3, at=(0, 0, 1)).taps] == ["hole", "hole"]
    taps = poolspec.explain(d, x3, at=(0, 0, 2)).taps
    assert [(t.kind, tuple(t.coordinate)) for t in taps] == [("hole", (2,)), ("input", (1,))]
    huge = poolspec.problem(op="max", stablehlo="window_dimensions=1,1,1 base_dilations=1,1,1000000",
                            input_shape=(1, 1, 1000))
    for call in (lambda: poolspec.evaluate(huge, np.zeros((1, 1, 1000), np.float32)),
                 lambda: poolspec.explain(huge, np.zeros((1, 1, 1000), np.float32), at=(0, 0, 0))):
        with pytest.raises(poolspec.Error, match=r"input \(1x1x999000001\) has 999000001 elements"):
            call()
    # What StableHLO allows and the problem model cannot state is said so, not called invalid.
    with pytest.raises(poolspec.Error, match="base_dilations.*divisor=count.*cannot state"):
        poolspec.problem(op="avg", stablehlo="window_dimensions=1,1,2 base_dilations=1,1,2 divisor=count",
                         input_shape=(1, 1, 4))
    rows = {r.framework: r for r in poolspec.diff(op="avg", input_shape=(1, 1, 4, 4),
                                                   onnx="kernel_shape=2,2 strides=2,2")}
    assert rows["stablehlo"].verdict == "defined" and rows["stablehlo"].agrees


def test_bad_arguments_are_refused_with_their_name():
    p = poolspec.problem("avg:f32:n1c1:h4w4:k2x2:s2x2:pb0x0:pe0x0:exclude:floor")
    x = np.zeros((1, 1, 4, 4), np.float32)
    y = poolspec.evaluate(p, x)
    cases = [
        (lambda: poolspec.problem(op="avg", pytorch=dict(kernel_size=2), input_shape=(1, 1, 4.5, 4)),
         r"input_shape\[2\]=4.5: must be an integer"),
        (lambda: poolspec.problem(op="avg", pytorch=dict(kernel_size=2), input_shape="1,1,4,4"),
         r"input_shape='1,1,4,4': must be a sequence of integers"),
        (lambda: poolspec.problem(op="avg", pytorch=5, input_shape=(1, 1, 4, 4)),
         r"attributes 5: must be a mapping"),
        (lambda: poolspec.problem(op="avg", pytorch=dict(kernel_size=[[2, 2]]), input_shape=(1, 1, 4, 4)),
         r"kernel_size\[0\]=\[2, 2\]: must be an integer"),
        (lambda: poolspec.problem(op="avg", pytorch=dict(kernel_size=2**70), input_shape=(1, 1, 4, 4)),
         r"1180591620717411303424 is out of range"),
        (lambda: poolspec.problem(op="avg", pytorch=dict(kernel_size=2), opset=19, input_shape=(1, 1, 4, 4)),
         r"opset=19: only with openvino or onnx"),
        (lambda: poolspec.problem(op="avg", onnx=dict(kernel_shape=[2, 2]), opset=0, input_shape=(1, 1, 4, 4)),
         r"opset=0: must be 1\.\."),
        (lambda: poolspec.problem(op="avg", bogus=1, onnx="kernel_shape=2,2", input_shape=(1, 1, 4, 4)),
         r"bogus: not a framework poolspec knows, nor an argument of problem"),
        (lambda: poolspec.shape(None), r"problem None: a poolspec.Problem or a problem string"),
        (lambda: poolspec.explain(p, x, (0, 0, 0.5, 0)), r"at\[2\]=0.5: must be an integer"),
        (lambda: poolspec.explain(p, x, (0, 0, 2, 0)), r"at\[2\]=2: must be in \[0, 2\)"),
        (lambda: poolspec.explain(p, x, (0, 0, 0)), r"3 coordinates; the output has 4 axes"),
        (lambda: poolspec.check(p, x, y, sample=2.5), r"sample=2.5: must be an integer"),
        (lambda: poolspec.check(p, x, y, sample=True), r"sample=True: must be an integer"),
        (lambda: poolspec.check(p, x, y, seed=-1), r"seed=-1: must be 0\.\."),
        (lambda: poolspec.check(p, x, y, accumulation=None), r"accumulation=None: must be exact"),
        (lambda: poolspec.check(p, x, y, accumulation=dict(sum_format="f32", extra_operations="1")),
         r"accumulation.extra_operations='1': must be an integer"),
        (lambda: poolspec.check(p, x, y, accumulation=dict(sum_format="f32", extra_operations=2**70)),
         r"accumulation.extra_operations=1180591620717411303424: must be 0..16"),
        (lambda: poolspec.check(p, x, y, accumulation=dict(sum_format="f32", output_ulps="0.5")),
         r"accumulation.output_ulps='0.5': must be a number in 0..4"),
        (lambda: poolspec.check(poolspec.problem("max:f32:n1c1:h4w4:k2x2:s2x2:pb0x0:pe0x0:floor:idx=plane"), x, y),
         r"indices: required: the problem has an indices output \(idx=plane\)"),
    ]
    for call, pattern in cases:
        with pytest.raises(poolspec.Error, match=pattern):
            call()


def test_work_is_bounded_before_it_starts():
    big = poolspec.problem("avg:f32:n1c1:h512w512:k512x512:s1x1:pb511x511:pe511x511:include_full:floor")
    x = np.ones((1, 1, 512, 512), np.float32)
    with pytest.raises(poolspec.Error, match=r"tap visits .* over the limit of 4294967296 \(max_tap_visits= raises it\)"):
        poolspec.evaluate(big, x)
    with pytest.raises(poolspec.Error, match=r"tap visits .* \(max_tap_visits= raises it\)"):
        poolspec.check(big, x, np.ones(big.output_shape, np.float32))
    wide = poolspec.problem("max:f32:n1c1:h4w4:k1x1:s1x1:pb20000x20000:pe20000x20000:floor:empty=-inf")
    with pytest.raises(poolspec.Error, match=r"the output \(1x1x40004x40004\) has 1600320016 elements, over the limit of 268435456 \(max_elements= raises it\)"):
        poolspec.evaluate(wide, np.ones((1, 1, 4, 4), np.float32))
    k = 3000000
    long_window = poolspec.problem(f"avg:f32:n1c1:w4:k{k}:s1:pb{k - 1}:pe{k - 1}:include_full:floor")
    with pytest.raises(poolspec.Error, match=r"more than 100000 taps \(kernel 3000000\), the most explain lists \(max_taps= raises it\)"):
        poolspec.explain(long_window, np.ones((1, 1, 4), np.float32), (0, 0, 0))
    with pytest.raises(poolspec.Error, match=r"over the limit of 10 \(max_tap_visits= raises it\)"):
        poolspec.diff(op="avg", input_shape=(1, 1, 8, 8), pytorch=dict(kernel_size=3), max_tap_visits=10)


XS3_OPERATORS = [
    ("op=avgpool2d window=3,3 start=1,2 stride=2,2", (9, 10, 8)),
    ("op=maxpool2d window=2,3 start=0,1 stride=1,2 output=3,2", (6, 7, 4)),
    ("op=avgpool2d_global bias=-40 symmetric=0", (4, 5, 16)),
]


@pytest.mark.parametrize("attributes,hwc", XS3_OPERATORS)
def test_xs3_operators_as_the_command_runs_them(attributes, hwc, tmp_path, poolspec_command):
    p = poolspec.problem(xs3=attributes, input_shape=hwc)
    assert p.frontend == "xs3" and p.input_shape == list(hwc) and p.channels_last
    x = np.random.default_rng(3).integers(-128, 127, size=hwc, endpoint=True).astype(np.int8)
    np.save(tmp_path / "x.npy", x)
    code, out, err = run_command(poolspec_command, "run", "--xs3", attributes, "--input",
                                 str(tmp_path / "x.npy"), "--output", str(tmp_path / "y.npy"),
                                 "--json")
    assert code == 0, err
    model = poolspec.run_xs3(p, x)
    assert model.dtype == np.int8 and model.tobytes() == np.load(tmp_path / "y.npy").tobytes()
    assert json.loads(out)["spec_problem"] == p.string
    spec = poolspec.evaluate(p, x)
    assert spec.shape == model.shape == tuple(p.output_shape)
    assert poolspec.check(p, x, spec).ok


def test_xs3_spec_meaning_is_the_window_mean_rounded_half_up():
    # Derived here from the operator's definition: windows of 3x3 from row 1, column 2, stride 2;
    # the mean rounded half toward +infinity, floor((2 * sum + n) / (2 * n)).
    x = np.random.default_rng(5).integers(-128, 127, size=(9, 10, 8), endpoint=True).astype(np.int8)
    p = poolspec.problem(xs3=dict(op="avgpool2d", window=(3, 3), start=(1, 2), stride=(2, 2)),
                         input_shape=x.shape)
    rows, cols = (9 - 1 - 3) // 2 + 1, (10 - 2 - 3) // 2 + 1
    want = np.zeros((rows, cols, 8), dtype=np.int8)
    for r in range(rows):
        for c in range(cols):
            window = x[1 + 2 * r:4 + 2 * r, 2 + 2 * c:5 + 2 * c, :].astype(np.int64)
            want[r, c] = (2 * window.sum(axis=(0, 1)) + 9) // 18
    assert poolspec.evaluate(p, x).tobytes() == want.tobytes()
    wrong = want.copy()
    wrong[1, 0, 5] += 1
    result = poolspec.check(p, x, wrong)
    assert not result.ok and list(result.mismatches[0].coordinate) == [1, 0, 5]
    e = poolspec.explain(p, x, at=(1, 0, 5))
    assert e.result == want[1, 0, 5] and e.output_coordinate == (1, 0, 5)
    assert [tap.coordinate for tap in e.taps][:2] == [(3, 2), (3, 3)]  # row 1 + 2 * 1, column 2


def test_xs3_refusals_name_the_attribute():
    with pytest.raises(poolspec.Error, match="window=4,4 start=0,0: the first window does not fit"):
        poolspec.problem(xs3="op=avgpool2d window=4,4", input_shape=(3, 3, 4))
    with pytest.raises(poolspec.Error, match="op=avg: an XS3 operator is named by its attributes"):
        poolspec.problem(op="avg", xs3="op=avgpool2d window=2,2", input_shape=(4, 4, 4))
    with pytest.raises(poolspec.Error, match="dtype=f32: XS3 operators take an int8 image"):
        poolspec.problem(xs3="op=avgpool2d window=2,2", input_shape=(4, 4, 4), dtype="f32")
    with pytest.raises(poolspec.Error, match="input rank 4"):
        poolspec.problem(xs3="op=maxpool2d window=2,2", input_shape=(1, 4, 4, 4))
    p = poolspec.problem(xs3="op=maxpool2d window=2,2", input_shape=(4, 4, 4))
    with pytest.raises(poolspec.Error, match="x: dtype float32"):
        poolspec.run_xs3(p, np.zeros((4, 4, 4), dtype=np.float32))
    with pytest.raises(poolspec.Error, match="not an XS3 operator's"):
        poolspec.run_xs3(poolspec.problem(PROBLEMS[0]), np.zeros((1, 2, 5, 5), dtype=np.float32))
    with pytest.raises(poolspec.Error, match="xs3: diff"):
        poolspec.diff(op="max", xs3="op=maxpool2d window=2,2", input_shape=(4, 4, 4))


def test_the_stubs_name_what_the_compiled_core_has():
    import ast
    import inspect
    import pathlib

    stub = ast.parse(pathlib.Path(poolspec._poolspec.__file__).with_name("_poolspec.pyi").read_text())
    stubbed = {node.name for node in stub.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    compiled = {name for name, value in vars(poolspec._poolspec).items()
                if not name.startswith("_") and (callable(value) or inspect.isclass(value))}
    assert stubbed == compiled
    problem_stub = next(n for n in stub.body if isinstance(n, ast.ClassDef) and n.name == "Problem")
    properties = {n.name for n in problem_stub.body if isinstance(n, ast.FunctionDef)}
    assert properties == {name for name, value in vars(poolspec.Problem).items()
                          if isinstance(value, property)}
