#!/usr/bin/env bash
# End-to-end tests of the poolspec command: the issue's acceptance commands, exit codes, and
# "no output file on error". Usage: test_cli.sh path/to/poolspec
set -u
poolspec=$1
source "$(dirname "$0")/checks.sh"

# --- the five OpenVINO AvgPool-1 XML examples (shapes derived in tests/test_frontends.cpp) ---
ov() { "$poolspec" shape --op avg --openvino "$1" --input-shape 1,3,32,32 --json; }
expect 0 '"output_shape":\[1,3,16,16\]' -- ov 'auto_pad="same_upper" exclude-pad="true" kernel="2,2" pads_begin="0,0" pads_end="1,1" strides="2,2"'
expect 0 '"output_shape":\[1,3,16,16\]' -- ov 'auto_pad="same_upper" exclude-pad="false" kernel="5,5" pads_begin="0,0" pads_end="1,1" strides="2,2"'
expect 0 '"output_shape":\[1,3,10,10\]' -- ov 'auto_pad="explicit" exclude-pad="true" kernel="5,5" pads_begin="1,1" pads_end="1,1" strides="3,3"'
expect 0 '"output_shape":\[1,3,15,15\]' -- ov 'auto_pad="explicit" exclude-pad="false" kernel="5,5" pads_begin="1,1" pads_end="1,1" strides="2,2"'
expect 0 '"output_shape":\[1,3,14,14\]' -- ov 'auto_pad="valid" exclude-pad="true" kernel="5,5" pads_begin="1,1" pads_end="1,1" strides="2,2"'
expect 0 '"pads_begin":\[1,1\],"pads_end":\[2,2\]' -- ov 'auto_pad="same_upper" exclude-pad="false" kernel="5,5" pads_begin="0,0" pads_end="1,1" strides="2,2"'
expect 0 'output shape  1x3x16x16' -- "$poolspec" shape 'avg:f32:n1c3:h32w32:k2x2:s2x2:pb0x0:pe0x0:exclude:floor'
expect 0 '"zero_divisor_possible":true' -- "$poolspec" shape --op avg --input-shape 1,1,6 --json \
  --openvino 'kernel="1" strides="4" auto_pad="same_upper" rounding_type="ceil" exclude-pad="true"'
expect 0 'window_shape|output shape  1x1x2x2' -- "$poolspec" shape --op max --input-shape 1,1,4,4 --ngraph 'window_shape=2,2 window_movement_strides=2,2'

# --- bad input: exit 2, and the message names the attribute ---
base='strides="1,1" pads_begin="0,0" pads_end="0,0" exclude-pad="true"'
expect 2 'kernel\[0\]=0' -- ov "kernel=\"0,2\" $base"
expect 2 'strides\[1\]=0' -- ov 'kernel="2,2" strides="1,0" pads_begin="0,0" pads_end="0,0" exclude-pad="true"'
expect 2 'kernel="2,2,2": 3 values' -- ov "kernel=\"2,2,2\" $base"
expect 2 'pads_begin\[0\]=-1' -- ov 'kernel="2,2" strides="1,1" pads_begin="-1,0" pads_end="0,0" exclude-pad="true"'
expect 2 'pads_end\[1\]=2: exclude-pad=true requires kernel\[1\]=2' -- ov 'kernel="2,2" strides="1,1" pads_begin="0,0" pads_end="0,2" exclude-pad="true"'
expect 2 'element count must be below 2\^62' -- "$poolspec" shape --op avg --input-shape 1,1,2147483647,2147483647,2147483647 \
  --openvino 'kernel="1,1,1" strides="1,1,1" auto_pad="valid" exclude-pad="true"'
expect 2 'kernel\[0\]=0' -- "$poolspec" shape 'avg:f32:n1c1:w4:k0:s1:pb0:pe0:exclude:floor'
expect 2 'exactly one of' -- "$poolspec" shape
expect 2 'op: must be avg or max|--op=mean' -- "$poolspec" shape --op mean --input-shape 1,1,4 --openvino 'kernel="2" strides="1" exclude-pad="true" auto_pad="valid"'
expect 2 '' -- "$poolspec" shape --no-such-flag
expect 0 '^poolspec [0-9]+\.[0-9]+\.[0-9]+' -- "$poolspec" --version
expect 0 '^\{"backends":\[\{"library":"built-in","name":"reference"' -- "$poolspec" certify --list --json --backend reference

# --- run and explain on real .npy files ---
# f32 [1e8, 1, -1e8, 1]: 0x4cbebc20, 0x3f800000, 0xccbebc20, 0x3f800000, little-endian.
npy "$work/sum.npy" '<f4' '1, 1, 4' '\x20\xbc\xbe\x4c\x00\x00\x80\x3f\x20\xbc\xbe\xcc\x00\x00\x80\x3f'
expect 0 '"result":0.5' -- "$poolspec" explain 'avg:f32:n1c1:w4:k4:s4:pb0:pe0:exclude:floor' --input "$work/sum.npy" --at 0,0,0 --json
expect 0 'wrote' -- "$poolspec" run 'avg:f32:n1c1:w4:k4:s4:pb0:pe0:exclude:floor' --input "$work/sum.npy" --output "$work/avg.npy"
# 0.5 in f32 is 0x3f000000: the output file ends with 00 00 00 3f.
[ "$(tail -c 4 "$work/avg.npy" | od -An -tx1 | tr -d ' \n')" = "0000003f" ] || fail "avg.npy does not hold f32 0.5"

# i8 4x4 1..16 through the OpenVINO front-end, with the input shape taken from the file.
npy "$work/x.npy" '|i1' '1, 1, 4, 4' '\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10'
expect 0 'i8 1x1x2x2' -- "$poolspec" run --op max --openvino 'kernel="2,2" strides="2,2" auto_pad="valid"' --input "$work/x.npy" --output "$work/max.npy"
[ "$(tail -c 4 "$work/max.npy" | od -An -tx1 | tr -d ' \n')" = "06080e10" ] || fail "max.npy does not hold 6 8 14 16"
expect 0 'pad_begin' -- "$poolspec" explain 'avg:i8:n1c1:h4w4:k3x3:s2x2:pb1x1:pe1x1:include_clip:ceil' --input "$work/x.npy" --at 0,0,0,2
expect 0 'divisor      6 \(include_clip\)' -- "$poolspec" explain 'avg:i8:n1c1:h4w4:k3x3:s2x2:pb1x1:pe1x1:include_clip:ceil' --input "$work/x.npy" --at 0,0,0,2
# The README's example: the corner tap (-1,5) lies past the padded extent of the last axis.
expect 0 '\(0,2\) -> \(-1,5\)  overhang' -- "$poolspec" explain 'avg:i8:n1c1:h4w4:k3x3:s2x2:pb1x1:pe1x1:include_clip:ceil' --input "$work/x.npy" --at 0,0,0,2
# The window drawn in the kernel's shape, headed by input coordinates: the i8 ramp 1..16 at
# output (0,2) of the README's problem: row -1 all begin padding, then 4 and 8 in column 3, end
# padding in column 4, and column 5 past the padded extent.
"$poolspec" explain 'avg:i8:n1c1:h4w4:k3x3:s2x2:pb1x1:pe1x1:include_clip:ceil' --input "$work/x.npy" --at 0,0,0,2 >"$work/grid.txt"
grid=$(sed -n '/^window/,/^taps/p' "$work/grid.txt" | sed -n '3,6p' | tr -s ' ')
[ "$grid" = "$(printf ' 3 4 5\n -1 pad< pad< over\n 0 4 pad> over\n 1 8 pad> over')" ] ||
  { fail "explain's window grid is not the one worked out"; printf '%s\n' "$grid"; }
# 3-d: one grid per coordinate of the first axis; a window too wide to draw says so.
npy "$work/cube.npy" '|i1' '1, 1, 2, 2, 2' '\x01\x02\x03\x04\x05\x06\x07\x08'
expect 0 'where spatial axis 0 = -1' -- "$poolspec" explain 'avg:i8:n1c1:d2h2w2:k2x2x2:s1x1x1:pb1x0x0:pe0x0x0:exclude:floor' --input "$work/cube.npy" --at 0,0,0,0,0
npy "$work/long.npy" '|i1' '1, 1, 40' "$(printf '\\x01%.0s' $(seq 40))"
expect 0 '40 taps in a window of 40: too large to draw in 100 columns' -- "$poolspec" explain 'max:i8:n1c1:w40:k40:s1:pb0:pe0:floor' --input "$work/long.npy" --at 0,0,0
# The exact value as a fraction and a decimal ("=" when it ends, "~" when not); the result in the
# dtype's fewest digits. (0,0,0,0) of the i8 ramp 1..16: 1 + 2 + 5 + 6 = 14 over 9 taps.
expect 0 'exact value  14/9 ~ 1\.5555555555555555556' -- "$poolspec" explain 'avg:i8:n1c1:h4w4:k3x3:s2x2:pb1x1:pe1x1:include_clip:ceil' --input "$work/x.npy" --at 0,0,0,0
expect 0 'exact value  1/2 = 0\.5' -- "$poolspec" explain 'avg:f32:n1c1:w4:k4:s4:pb0:pe0:exclude:floor' --input "$work/sum.npy" --at 0,0,0
expect 1 '\(0,0,0,2\): 1\.3333334 here, 2 in the source' -- "$poolspec" diff --op avg --input-shape 1,1,4,4 \
  --pytorch 'kernel_size=3 stride=2 padding=1 ceil_mode=True count_include_pad=True'
expect 0 '"index":5' -- "$poolspec" explain 'max:i8:n1c1:h4w4:k2x2:s2x2:pb0x0:pe0x0:floor:idx=plane' --input "$work/x.npy" --at 0,0,0,0 --json
expect 0 'i64 indices' -- "$poolspec" run 'max:i8:n1c1:h4w4:k2x2:s2x2:pb0x0:pe0x0:floor:idx=tensor' --input "$work/x.npy" --output "$work/m.npy" --indices "$work/i.npy"

# --- errors leave no output file behind ---
rm -f "$work/out.npy"
expect 2 'empty=error' -- "$poolspec" run 'avg:i8:n1c1:h4w4:k1x1:s4x4:pb0x0:pe0x0:exclude:ceil' --input "$work/x.npy" --output "$work/out.npy"
[ ! -e "$work/out.npy" ] || fail "an output file was left behind after a refused problem"
head -c 20 "$work/x.npy" >"$work/truncated.npy"
expect 2 'truncated|header length' -- "$poolspec" run 'avg:i8:n1c1:h4w4:k2x2:s2x2:pb0x0:pe0x0:exclude:floor' --input "$work/truncated.npy" --output "$work/out.npy"
npy "$work/lying.npy" '|i1' '1, 1, 8, 8' '\x01\x02\x03\x04'
expect 2 'promises 64 bytes' -- "$poolspec" run 'avg:i8:n1c1:h8w8:k2x2:s2x2:pb0x0:pe0x0:exclude:floor' --input "$work/lying.npy" --output "$work/out.npy"
expect 2 'the problem takes f32' -- "$poolspec" run 'avg:f32:n1c1:h4w4:k2x2:s2x2:pb0x0:pe0x0:exclude:floor' --input "$work/x.npy" --output "$work/out.npy"
[ ! -e "$work/out.npy" ] || fail "an output file was left behind after bad input"
ls "$work" | grep -q partial && fail "a partial file was left behind"

# --- the XS3 model (xs3/README.md section 5): run --xs3 on (H, W, C) int8 images ---
fill() { local n=$1 byte=$2 s=""; for ((i = 0; i < n; i++)); do s+="$byte"; done; printf '%s' "$s"; }
npy "$work/g103.npy" '|i1' '7, 7, 1' "$(fill 49 '\x67')"         # 7x7 of 103
expect 0 '"values":\[104\]' -- "$poolspec" run --xs3 'op=avgpool2d_global' --input "$work/g103.npy" --output "$work/o.npy" --json
npy "$work/m128.npy" '|i1' '1, 3, 1' "$(fill 3 '\x80')"           # N = 3 of -128
expect 0 '"values":\[-127\]' -- "$poolspec" run --xs3 'op=avgpool2d_global symmetric=0' --input "$work/m128.npy" --output "$work/o.npy" --json
expect 0 '"values":\[-127\]' -- "$poolspec" run --xs3 'op=avgpool2d_global symmetric=1' --input "$work/m128.npy" --output "$work/o.npy" --json
npy "$work/s1147.npy" '|i1' '3, 3, 1' "$(fill 8 '\x80')\x85"     # 8 x -128 and -123: sum -1147
expect 0 '"values":\[-128\]' -- "$poolspec" run --xs3 'op=avgpool2d_global' --input "$work/s1147.npy" --output "$work/o.npy" --json
expect 0 '"values":\[-127\]' -- "$poolspec" run --xs3 'op=avgpool2d_global symmetric=1' --input "$work/s1147.npy" --output "$work/o.npy" --json
npy "$work/x24.npy" '|i1' '2, 2, 1' "$(fill 4 '\x18')"            # N = 4 of 24
expect 0 '"values":\[14\]' -- "$poolspec" run --xs3 'op=avgpool2d_global bias=-40 symmetric=0' --input "$work/x24.npy" --output "$work/o.npy" --json
npy "$work/i1517.npy" '|i1' '15, 17, 4' "$(fill 1020 '\x01')"
rm -f "$work/o.npy"
expect 2 'X_h\*X_w = 15x17: pixel count N=255' -- "$poolspec" run --xs3 'op=avgpool2d_global' --input "$work/i1517.npy" --output "$work/o.npy"
[ ! -e "$work/o.npy" ] || fail "an output file was left behind after a refused init"
npy "$work/w.npy" '|i1' '4, 4, 4' "$(fill 64 '\x05')"
expect 0 'i8 2x2x4' -- "$poolspec" run --xs3 'op=avgpool2d window=2,2 start=0,0 stride=2,2' --input "$work/w.npy" --output "$work/o.npy"
expect 0 'i8 3x3x4' -- "$poolspec" run --xs3 'op=maxpool2d window=2,2 stride=1,1' --input "$work/w.npy" --output "$work/o.npy"
expect 2 'op=sum' -- "$poolspec" run --xs3 'op=sum' --input "$work/w.npy" --output "$work/o.npy"

# --- every framework's attributes (issue: frameworks) ---
expect 0 '"output_shape":\[1,1,3,3\]' -- "$poolspec" shape --op avg --input-shape 1,1,4,4 --json \
  --pytorch 'kernel_size=3 stride=2 padding=1 ceil_mode=True count_include_pad=True'
expect 0 'include_clip:ceil_torch' -- "$poolspec" shape --op avg --input-shape 1,1,4,4 \
  --onnx 'kernel_shape=3,3 strides=2,2 pads=1,1,1,1 ceil_mode=1 count_include_pad=1'
expect 0 'include_clip:ceil:' -- "$poolspec" shape --op avg --input-shape 1,1,4,4 --opset 19 \
  --onnx 'kernel_shape=3,3 strides=2,2 pads=1,1,1,1 ceil_mode=1 count_include_pad=1'
expect 0 '"operator":"ONNX GlobalMaxPool-22 \(opset 22\)","output_shape":\[2,3,1,1\]' -- \
  "$poolspec" shape --op global_max --input-shape 2,3,5,5 --onnx '' --json
expect 0 '"input_shape":\[1,5,7,3\],"operator":"tf.nn.max_pool","output_shape":\[1,3,4,3\]' -- "$poolspec" shape --op max --json \
  --input-shape 1,5,7,3 --tensorflow 'ksize=3 strides=2 padding=SAME'
expect 0 '"output_shape":\[1,2,2,1\]' -- "$poolspec" shape --op avg --json --dtype i8 --input-shape 1,4,4,1 \
  --tflite 'padding=SAME stride_w=2 stride_h=2 filter_width=3 filter_height=3'
expect 0 'include_full:floor' -- "$poolspec" shape --op avg --input-shape 1,1,4,4 \
  --onednn 'alg=pooling_avg_include_padding kernel=3,3 strides=2,2 padding_l=1,1 padding_r=2,2'
expect 0 'OpenVINO MaxPool-8.*idx=tensor' -- "$poolspec" shape --op max --opset 8 --input-shape 1,1,5,5 --json \
  --openvino 'kernel="2,2" strides="1,1" pads_begin="0,0" pads_end="0,0" dilations="2,2"'
expect 2 'dilations: not an attribute of OpenVINO MaxPool-1; it exists from opset 8' -- "$poolspec" shape --op max \
  --input-shape 1,1,5,5 --openvino 'kernel="2,2" strides="1,1" pads_begin="0,0" pads_end="0,0" dilations="2,2"'
expect 2 'padding\[0\]=2: torch avg_pool2d requires padding' -- "$poolspec" shape --op avg --input-shape 1,1,8,8 \
  --pytorch 'kernel_size=3 padding=2'
expect 2 'auto_pad=SAME: must be NOTSET' -- "$poolspec" shape --op avg --input-shape 1,1,8,8 --onnx 'kernel_shape=3,3 auto_pad=SAME'
expect 2 '--opset=8: only with --openvino or --onnx' -- "$poolspec" shape --op avg --input-shape 1,1,8,8 --opset 8 --pytorch 'kernel_size=3'
expect 2 'exactly one of' -- "$poolspec" shape --op avg --input-shape 1,1,8,8 --pytorch 'kernel_size=3' --onnx 'kernel_shape=3,3'

# run through a channels-last framework: NHWC f32 1x2x2x2, channel 0 = 1 2 3 4, channel 1 = 10 20 30 40;
# a 2x2 VALID average gives 2.5 and 25 (0x40200000, 0x41c80000), written NHWC 1x1x1x2.
npy "$work/nhwc.npy" '<f4' '1, 2, 2, 2' '\x00\x00\x80\x3f\x00\x00\x20\x41\x00\x00\x00\x40\x00\x00\xa0\x41\x00\x00\x40\x40\x00\x00\xf0\x41\x00\x00\x80\x40\x00\x00\x20\x42'
expect 0 '"output_shape":\[1,1,1,2\]' -- "$poolspec" run --op avg --tensorflow 'ksize=2 strides=2 padding=VALID' \
  --input "$work/nhwc.npy" --output "$work/nhwc_out.npy" --json
tail -c 8 "$work/nhwc_out.npy" | od -An -tx1 | tr -d ' \n' | grep -q '00002040' || fail "tensorflow run: expected 2.5 first"
tail -c 8 "$work/nhwc_out.npy" | od -An -tx1 | tr -d ' \n' | grep -q '0000c841$' || fail "tensorflow run: expected 25 second"

# --- diff: the 4x4 1..16, k3 s2 p1, ceil, include-padding example (docs/semantics.md 1b) ---
diff_example() { "$poolspec" diff --op avg --input-shape 1,1,4,4 "$@" \
  --pytorch 'kernel_size=3 stride=2 padding=1 ceil_mode=True count_include_pad=True'; }
expect 1 '\[1\.556 3\.333 2 / 6\.333 11 6 / 4\.5 7\.5 4\]' -- diff_example
expect 1 'openvino@1 .*DIFFERS.*' -- diff_example
expect 1 '\[1\.556 3\.333 1\.333 / 6\.333 11 4 / 3 5 1\.778\]' -- diff_example
expect 1 'onednn .*DIFFERS' -- diff_example
expect 1 'onnx@22 .*agrees' -- diff_example
expect 1 '"disagreeing":3' -- diff_example --json
expect 0 '0 of [0-9]+ other rules disagree' -- "$poolspec" diff --op max --input-shape 1,1,5 --onnx 'kernel_shape=2 strides=2 pads=0,1 ceil_mode=1'
expect 2 'diff: give the problem in one framework' -- "$poolspec" diff 'avg:f32:n1c1:w4:k2:s2:pb0:pe0:exclude:floor'
# StableHLO's maximum orders -0 below +0: its +0 differs from the first-value rule's -0 (PyTorch's).
expect 1 'pytorch .*DIFFERS in 1 of 1 outputs, in the sign of zero only' -- "$poolspec" diff --op max --input-shape 1,1,2 --stablehlo 'window_dimensions=1,1,2' --values=-0,0
expect 1 '\(0,0,0\): -0 here, 0 in the source' -- "$poolspec" diff --op max --input-shape 1,1,2 --stablehlo 'window_dimensions=1,1,2' --values=-0,0
# TOSA leaves a zero's sign open: either zero agrees with it.
expect 0 '0 of [0-9]+ other rules disagree' -- "$poolspec" diff --op max --input-shape 1,1,2,1 --tosa 'kernel=1,2 stride=1,1 pad=0,0,0,0' --values=-0,0

# --- TOSA: the three verdicts (docs/semantics.md, TOSA) ---
tosa_avg() { "$poolspec" shape --op avg --dtype i8 "$@"; }
expect 0 'verdict +defined' -- tosa_avg --input-shape 1,6,6,8 --tosa 'kernel=3,3 stride=3,3 pad=0,0,0,0 input_zp=-128'
expect 0 'round=tosa:input_zp=-128' -- tosa_avg --input-shape 1,6,6,8 --tosa 'kernel=3,3 stride=3,3 pad=0,0,0,0 input_zp=-128'
# 9,000,000 taps of x - input_zp in [0, 255] can pass 2^31 - 1; in [-128, 127] they cannot.
expect 0 'verdict +unpredictable: a window of up to 9000000 input taps' -- \
  tosa_avg --input-shape 1,3000,3000,1 --tosa 'kernel=3000,3000 stride=1,1 pad=0,0,0,0 input_zp=-128'
expect 0 '"verdict":"unpredictable"' -- \
  tosa_avg --json --input-shape 1,3000,3000,1 --tosa 'kernel=3000,3000 stride=1,1 pad=0,0,0,0 input_zp=-128'
expect 0 'verdict +defined' -- tosa_avg --input-shape 1,3000,3000,1 --tosa 'kernel=3000,3000 stride=1,1 pad=0,0,0,0'
expect 2 'kernel_y=3 with stride_y=2: .* not a multiple of the stride' -- \
  tosa_avg --input-shape 1,4,4,1 --tosa 'kernel=3,3 stride=2,2 pad=0,0,0,0'
expect 0 'tosa +TOSA AVG_POOL2D .*agrees' -- "$poolspec" diff --op avg --input-shape 1,1,4,4 \
  --onnx 'kernel_shape=2,2 strides=2,2'
expect 0 '"framework":"tosa",[^{}]*"verdict":"defined"' -- \
  "$poolspec" diff --json --op avg --input-shape 1,1,4,4 --onnx 'kernel_shape=2,2 strides=2,2'
expect 0 'tosa +invalid \(refused by its rules\): kernel_y=3 with stride_y=2' -- \
  "$poolspec" diff --op avg --input-shape 1,1,4,4 --onnx 'kernel_shape=3,3 strides=2,2'

# --- StableHLO reduce_window: crops, the float sum's bound, what the model cannot state ---
hlo() { "$poolspec" shape --op avg --input-shape 1,2,5,5 "$@"; }
expect 0 'spec layout +1x2x5x4 -> 1x2x3x2 .*cropped' -- \
  hlo --stablehlo 'window_dimensions=1,1,3,3 window_strides=1,1,2,2 padding=[[0,0],[0,0],[1,1],[-1,1]] divisor=count'
expect 0 'verdict +defined within a bound: the window.s 9 terms are summed in f32' -- \
  hlo --stablehlo 'window_dimensions=1,1,3,3 window_strides=1,1,2,2 divisor=window'
expect 0 '"bound":"the window' -- hlo --json --stablehlo 'window_dimensions=1,1,3,3 divisor=window'
# C15: a dimension with no window is an empty result, which shape and run give; explain and diff,
# which need an element or a Problem, refuse it saying so.
expect 0 'output shape +1x2x5x0' -- hlo --stablehlo 'window_dimensions=1,1,1,7 padding=0,0,0,0,0,0,-1,0'
expect 0 'verdict +defined: an empty result; dimension 3: no window fits .*window_dimensions\[3\]=7 dilated to 7 over a padded input of 4' -- \
  hlo --stablehlo 'window_dimensions=1,1,1,7 padding=0,0,0,0,0,0,-1,0'
expect 0 '"output_shape":\[1,2,5,0\],.*"verdict":"defined"' -- \
  hlo --json --stablehlo 'window_dimensions=1,1,1,7 padding=0,0,0,0,0,0,-1,0'
empty=(--op max --stablehlo 'window_dimensions=1,1,1,7' --input "$work/x.npy")
expect 0 'wrote .*empty.npy \(i8 1x1x4x0\)' -- "$poolspec" run "${empty[@]}" --output "$work/empty.npy"
head -c 128 "$work/empty.npy" | grep -q "'shape': (1, 1, 4, 0)" || fail "empty.npy does not hold a 1x1x4x0 array"
expect 2 'window_dimensions\[3\]=7: no window fits the padded input of 4 .*C15: an empty result' -- \
  "$poolspec" explain "${empty[@]}" --at 0,0,0,0
expect 2 'no window fits .*C15' -- "$poolspec" diff "${empty[@]}"
expect 2 'window_strides\[2\]=0: must be > 0' -- hlo --stablehlo 'window_dimensions=1,1,2,2 window_strides=1,1,0,1'
# Base dilation: the holes (the init value, i8's -128 here) are elements of the Problem's input.
dilated=(--op max --stablehlo 'window_dimensions=1,1,2,2 base_dilations=1,1,2,2' --input "$work/x.npy")
expect 0 'spec layout +1x1x7x7 -> 1x1x6x6 .*base dilation 2,2: holes of -128' -- \
  "$poolspec" shape --op max --dtype i8 --input-shape 1,1,4,4 --stablehlo 'window_dimensions=1,1,2,2 base_dilations=1,1,2,2'
expect 0 'i8 1x1x6x6' -- "$poolspec" run "${dilated[@]}" --output "$work/holes.npy"
expect 0 '\(0,1\) -> \(0,1\)  hole +-128' -- "$poolspec" explain "${dilated[@]}" --at 0,0,0,0
expect 0 '4 in the input \(3 of them holes\)' -- "$poolspec" explain "${dilated[@]}" --at 0,0,1,1
# Only the cropped input is built: one element of a dilated axis of 2^31 - 1.
expect 0 'i8 1x1x4x1' -- "$poolspec" run --op max --input "$work/x.npy" --output "$work/far.npy" \
  --stablehlo 'window_dimensions=1,1,1,1 base_dilations=1,1,1,715827882 padding=[[0,0],[0,0],[0,0],[-2147483646,0]]'
[ "$(tail -c 4 "$work/far.npy" | od -An -tx1 | tr -d ' \n')" = "04080c10" ] || fail "far.npy does not hold 4 8 12 16"
expect 0 'onnx@22 .*no base dilation' -- "$poolspec" diff "${dilated[@]}"
huge=(--op max --stablehlo 'window_dimensions=1,1,1,1 base_dilations=1,1,100000,100000' --input "$work/x.npy")
too_large="the problem's input \(1x1x300001x300001\) has 90000600001 elements, over the limit"
expect 2 "$too_large" -- "$poolspec" run "${huge[@]}" --output "$work/none.npy"
expect 2 "$too_large" -- "$poolspec" explain "${huge[@]}" --at 0,0,0,0
[ ! -e "$work/none.npy" ] || fail "run left none.npy after refusing the problem's input size"
expect 0 'stablehlo +invalid|stablehlo +StableHLO reduce_window add, divided, output 2x2: agrees' -- \
  "$poolspec" diff --op avg --input-shape 1,1,4,4 --onnx 'kernel_shape=2,2 strides=2,2'
expect 1 '"framework":"stablehlo",[^{}]*"verdict":"beyond the model"' -- \
  "$poolspec" diff --json --op avg --dtype i8 --input-shape 1,4,4,1 --tflite 'padding=VALID stride_w=2 stride_h=2 filter_width=2 filter_height=2'

# --- onnx-test on the ONNX backend node tests ---
node=/usr/share/libonnx-testdata/data/node
expect 0 '2 passed, 0 failed' -- "$poolspec" onnx-test "$node/test_maxpool_with_argmax_2d_precomputed_strides" "$node/test_averagepool_2d_ceil"
expect 2 'op Relu is not a pooling op' -- "$poolspec" onnx-test "$node/test_relu"
expect 2 'model.onnx: cannot be read' -- "$poolspec" onnx-test "$work"

# --- JSON (docs/json.md): one document on one line, naming its schema, for every command ---
json_doc() {  # json_doc SCHEMA COMMAND...: exit 0 or 1, one line, its schema
  local schema=$1
  shift
  local doc
  doc=$("$@" 2>/dev/null)
  [ "$(printf '%s\n' "$doc" | wc -l)" -eq 1 ] || { fail "--json printed $(printf '%s\n' "$doc" | wc -l) lines: $*"; return; }
  grep -q "\"schema\":\"poolspec.$schema/1\"" <<<"$doc" || fail "no schema poolspec.$schema/1 in: $*"
}
p4='avg:i8:n1c1:h4w4:k2x2:s2x2:pb0x0:pe0x0:exclude:floor'   # on x.npy, the i8 ramp 1..16
onnx_node=/usr/share/libonnx-testdata/data/node                 # scripts/install-deps.sh installs it
json_doc shape "$poolspec" shape "$p4" --json
json_doc run "$poolspec" run "$p4" --input "$work/x.npy" --output "$work/json.npy" --json
json_doc explain "$poolspec" explain "$p4" --input "$work/x.npy" --at 0,0,0,0 --json
json_doc diff "$poolspec" diff --op max --input-shape 1,1,4 --pytorch 'kernel_size=2 stride=1' --values nan,1,3,3 --json
json_doc onnx-test "$poolspec" onnx-test "$onnx_node/test_maxpool_2d_pads" --json
json_doc prove "$poolspec" prove --filter extent/floor --json
json_doc prove-list "$poolspec" prove --list --json
json_doc seeds "$poolspec" seeds --json
json_doc certify-list "$poolspec" certify --list --json
json_doc certify-report "$poolspec" certify --backend reference --suite smoke --filter enum1d --layout nchw --out "$work/json-cert" --json
json_doc error "$poolspec" shape bogus --json
json_doc error "$poolspec" shapee --json
# NaN is the string "nan" wherever a number may stand; none is null.
expect 1 '"values":\["nan",3.0,3.0\]' -- "$poolspec" diff --op max --input-shape 1,1,4 --pytorch 'kernel_size=2 stride=1' --values nan,1,3,3 --json
expect 0 '"operator":null' -- "$poolspec" shape "$p4" --json

# --- the main job: the seeds, errata included ---
expect 0 'ERRATUM.*XML example 1' -- "$poolspec"
expect 0 '"verdict":"erratum"' -- "$poolspec" seeds --json

# --- certify: reports written, a replay, bad input refused (the runner itself: test_certify.cpp) ---
expect 0 'reference@spec .*100%' -- "$poolspec" certify --backend reference --suite smoke --filter enum1d --layout nchw --out "$work/cert"
for f in matrix.txt report.json junit.xml; do [ -s "$work/cert/$f" ] || fail "certify wrote no $f"; done
# The matrix fits 100 columns, even for a library named by a long path.
awk 'length > 100 { exit 1 }' "$work/cert/matrix.txt" || fail "certify's matrix.txt is wider than 100 columns"
grep -q '<testsuite name="reference@spec"' "$work/cert/junit.xml" || fail "junit.xml has no reference@spec testsuite"
# Progress lines in a log (stderr not a terminal): with --progress-seconds 0, one after every run.
expect 0 'certify: [0-9]+ of [0-9]+ runs \([0-9]+%\) after [0-9]+ s; now reference@spec ' -- "$poolspec" certify \
  --backend reference --suite smoke --filter enum1d --layout nchw --out "$work/progress" --progress-seconds 0
expect 0 'reference \(nchw\): PASS' -- "$poolspec" certify --backend reference --layout nchw --problem 'avg:f32:n1c1:h4w4:k3x3:s2x2:pb1x1:pe1x1:include_clip:ceil_torch'
# A run stopped by SIGTERM (the channel sweeps of ci: long enough to stop halfway) writes its reports for the runs made, says so, and exits 128 + 15;
# runs.jsonl holds exactly the runs the report does.
"$poolspec" certify --backend reference --suite ci --filter sweeps/c --out "$work/stopped" >"$work/stopped.out" 2>&1 &
certify_pid=$!
for _ in $(seq 600); do  # until a run has ended (at most a minute)
  [ -s "$work/stopped/runs.jsonl.partial" ] && break
  sleep 0.1
done
kill -TERM "$certify_pid"
wait "$certify_pid"
status=$?
[ "$status" -eq 143 ] || fail "certify stopped by SIGTERM exited $status (wanted 143)"
grep -q 'stopped by signal 15' "$work/stopped/report.json" || fail "the stopped run's report.json has no note of the stop"
# The same runs, case by case (runs.jsonl: one run object a line; report.json: the same objects).
grep -o '"case": *"[^"]*"' "$work/stopped/report.json" | sed 's/ //g' | sort >"$work/report-cases"
grep -o '"case": *"[^"]*"' "$work/stopped/runs.jsonl" | sed 's/ //g' | sort >"$work/stream-cases"
[ -s "$work/stream-cases" ] || fail "the stopped run's runs.jsonl holds no run"
cmp -s "$work/report-cases" "$work/stream-cases" || fail "runs.jsonl and report.json hold different runs"
# --resume goes on with it: the runs made are kept, the rest made, and the reports are the whole
# run's -- the same runs as a run that was never stopped.
kept=$(wc -l <"$work/stopped/runs.jsonl")
expect 2 'had other options' -- "$poolspec" certify --backend reference --suite ci --filter sweeps/c --layout nchw --out "$work/stopped" --resume
expect 0 "resumed: $kept of [0-9]* runs kept" -- "$poolspec" certify --backend reference --suite ci --filter sweeps/c --out "$work/stopped" --resume
expect 2 'ended by itself: nothing to resume' -- "$poolspec" certify --backend reference --suite ci --filter sweeps/c --out "$work/stopped" --resume
"$poolspec" certify --backend reference --suite ci --filter sweeps/c --out "$work/whole" >/dev/null 2>&1 || fail "the whole run failed"
for d in stopped whole; do
  grep -o '"case": *"[^"]*", *"part": *"[^"]*", *"problem": *"[^"]*", *"layout": *"[^"]*"' "$work/$d/runs.jsonl" | sort >"$work/$d-runs"
done
cmp -s "$work/stopped-runs" "$work/whole-runs" || fail "the resumed run's runs differ from a whole run's"
[ ! -e "$work/stopped/runs.jsonl.partial" ] || fail "the resumed run left runs.jsonl.partial"
expect 2 '--shard 3/2: must be i/n' -- "$poolspec" certify --shard 3/2
expect 2 '--layout nchwc: must be nchw or nhwc' -- "$poolspec" certify --layout nchwc
expect 2 '--rules caffe' -- "$poolspec" certify --rules caffe
expect 0 'reference +poolspec' -- "$poolspec" certify --list

# --- integers are decimal: a leading zero is not octal ---
expect 0 'ONNX AveragePool-10' -- "$poolspec" shape --op avg --input-shape 1,1,4,4 --opset 010 --onnx 'kernel_shape=2,2'

# --- colour: on a terminal only (script(1) gives the command one), never with NO_COLOR or TERM=dumb ---
on_terminal() { script -qec "$1" /dev/null; }
out=$(TERM=xterm on_terminal "'$poolspec' shape bogus")
grep -q $'\x1b\[1;31merror:\x1b\[0m' <<<"$out" || fail "no red 'error:' on a terminal: $out"
out=$(TERM=xterm on_terminal "'$poolspec' diff --op avg --input-shape 1,1,4,4 --pytorch 'kernel_size=3 stride=2 padding=1 ceil_mode=True count_include_pad=True'")
grep -q $'\x1b\[1;31mopenvino@1 ' <<<"$out" || fail "diff: a disagreeing framework is not red on a terminal"
grep -q $'\x1b\[32monnx@22 ' <<<"$out" || fail "diff: an agreeing framework is not green on a terminal"
for env in NO_COLOR=1 TERM=dumb; do
  out=$(env TERM=xterm $env bash -c "$(declare -f on_terminal); on_terminal \"'$poolspec' shape bogus\"")
  grep -q 'error:' <<<"$out" || fail "$env: no error shown: $out"
  ! grep -q $'\x1b' <<<"$out" || fail "$env: colour on a terminal"
done
out=$("$poolspec" shape bogus 2>&1)
! grep -q $'\x1b' <<<"$out" || fail "colour where stderr is not a terminal"

if [ "$failures" -ne 0 ]; then echo "$failures CLI check(s) failed"; exit 1; fi
echo "all CLI checks passed"
