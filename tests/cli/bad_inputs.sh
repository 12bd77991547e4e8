#!/usr/bin/env bash
# Bad inputs, one row each (docs/cli.md, "Bad input"): every one is refused with exit 2 and a
# "poolspec: error:" line that names what is wrong, before any work, within seconds, leaving no
# file behind and every existing file as it was. Usage: bad_inputs.sh path/to/poolspec
set -u
poolspec=$1
source "$(dirname "$0")/checks.sh"
rows=0

# bad PATTERN -- COMMAND...: exit 2 within 20 s, "poolspec: error:" and PATTERN (an extended
# regular expression) in stderr, nothing on stdout but what the row allows.
bad() {
  local pattern=$1
  shift 2
  rows=$((rows + 1))
  local err status
  err=$(timeout 20 "$@" 2>&1 >/dev/null)
  status=$?
  if [ "$status" -ne 2 ]; then fail "exit $status (wanted 2): $*"; echo "$err" | head -5; return; fi
  grep -q '^poolspec: error: ' <<<"$err" || { fail "no 'poolspec: error:' line: $*"; echo "$err" | head -3; }
  grep -Eq -- "$pattern" <<<"$err" || { fail "no /$pattern/ in the error of: $*"; echo "$err" | head -3; }
}

p4='avg:f32:n1c1:h4w4:k2x2:s2x2:pb0x0:pe0x0:exclude:floor'
npy "$work/x.npy" '<f4' '1, 1, 4, 4' "$(for i in $(seq 16); do printf '\\x00\\x00\\x80\\x3f'; done)"
mkdir "$work/folder"
printf 'KEEP' >"$work/keep.npy"

# --- problem-string fields that do not apply to the op or dtype: refused whatever their value ---
bad "field 10 'exclude': max pooling has no divisor" -- "$poolspec" shape 'max:f32:n1c1:h4w4:k2x2:s2x2:pb0x0:pe0x0:floor:exclude'
bad "'nan=ignore': only max pooling has a NaN policy" -- "$poolspec" shape 'avg:f32:n1c1:h4w4:k2x2:s2x2:pb0x0:pe0x0:exclude:floor:nan=ignore'
bad "'nan=propagate': only max pooling has a NaN policy" -- "$poolspec" shape 'avg:f32:n1c1:h4w4:k2x2:s2x2:pb0x0:pe0x0:exclude:floor:nan=propagate'
bad "'round=half_even': only an integer average rounds its mean \\(max picks" -- "$poolspec" shape 'max:i8:n1c1:h4w4:k2x2:s2x2:pb0x0:pe0x0:floor:round=half_even'
bad "'round=half_up': only an integer average rounds its mean \\(a float average" -- "$poolspec" shape 'avg:f32:n1c1:h4w4:k2x2:s2x2:pb0x0:pe0x0:exclude:floor:round=half_up'
bad "'bias=0': only an average has a bias" -- "$poolspec" shape 'max:i8:n1c1:h4w4:k2x2:s2x2:pb0x0:pe0x0:floor:bias=0'
bad "'idx=plane': only max pooling has an indices output" -- "$poolspec" shape 'avg:f32:n1c1:h4w4:k2x2:s2x2:pb0x0:pe0x0:exclude:floor:idx=plane'
bad "'start=first': only max pooling has a running maximum" -- "$poolspec" shape 'avg:f32:n1c1:h4w4:k2x2:s2x2:pb0x0:pe0x0:exclude:floor:start=first'
bad "'bogus': 1 field; expected at least op:dtype" -- "$poolspec" shape bogus

# --- input files: read header first, never whole before their header is checked ---
for command in run explain diff; do
  extra=()
  [ $command = run ] && extra=(--output "$work/keep.npy")
  [ $command = explain ] && extra=(--at 0,0,0,0)
  if [ $command = diff ]; then
    bad 'a folder, not a .npy file' -- "$poolspec" diff --op avg --pytorch 'kernel_size=2' --input "$work/folder"
  else
    bad 'a folder, not a .npy file' -- "$poolspec" $command "$p4" --input "$work/folder" "${extra[@]}"
  fi
done
bad 'a folder, not a .npy file' -- "$poolspec" certify --backend reference --problem "$p4" --input "$work/folder" --out "$work/cert"
bad 'not a .npy file' -- "$poolspec" run "$p4" --input /dev/zero --output "$work/keep.npy"
truncate -s 1G "$work/huge.bin"  # sparse: a gigabyte that is not a .npy file
bad 'not a .npy file' -- "$poolspec" run "$p4" --input "$work/huge.bin" --output "$work/keep.npy"
rm -f "$work/huge.bin"
npy "$work/claims.npy" '<f4' '1099511627776,' ''  # a header promising 2^40 elements
bad '1099511627776 elements, over the limit of 268435456 \(--max-elements raises it\)' -- \
  "$poolspec" run "$p4" --input "$work/claims.npy" --output "$work/keep.npy"
bad '16 elements, over the limit of 8 \(--max-elements raises it\)' -- \
  "$poolspec" run "$p4" --input "$work/x.npy" --output "$work/keep.npy" --max-elements 8
cp "$work/x.npy" "$work/longer.npy" && printf 'x' >>"$work/longer.npy"
bad 'the header promises 64 bytes of data .*the file holds 65' -- \
  "$poolspec" run "$p4" --input "$work/longer.npy" --output "$work/keep.npy"
bad '--max-elements=0: must be 1 or more' -- "$poolspec" run "$p4" --input "$work/x.npy" --output "$work/keep.npy" --max-elements 0

# --- sizes checked before the work: the output, the taps explain lists, a replayed problem ---
bad 'the output \(1x1x8x8\) has 64 elements, over the limit of 20' -- "$poolspec" run \
  'avg:f32:n1c1:h4w4:k1x1:s1x1:pb2x2:pe2x2:include_clip:floor' --input "$work/x.npy" --output "$work/keep.npy" --max-elements 20
bad 'the output \(1x1x4002x4002\) has 16016004 elements, over the limit of 100' -- "$poolspec" diff --op avg \
  --input-shape 1,1,2,2 --onnx 'kernel_shape=1,1 pads=2000,2000,2000,2000 count_include_pad=1' --max-elements 100
bad 'the input \(1x1x4x4\) has 16 elements, over the limit of 3' -- "$poolspec" diff --op avg --input-shape 1,1,4,4 \
  --pytorch 'kernel_size=2' --max-elements 3
bad 'more than 3 taps, the most explain lists \(--max-taps raises it\)' -- \
  "$poolspec" explain "$p4" --input "$work/x.npy" --at 0,0,0,0 --max-taps 3
bad 'a replayed problem has at most 268435456' -- "$poolspec" certify --backend reference \
  --problem 'avg:f32:n1c1:h100000w100000:k1x1:s1x1:pb0x0:pe0x0:exclude:floor' --out "$work/cert"

# The work of an evaluation: a kernel of 2^30 over four elements is refused, not ground through.
npy "$work/x4.npy" '<f4' '1, 1, 4' '\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40'
bad 'about 53687091[0-9]{2} tap visits \(5 outputs, .*over the limit of 4294967296 \(--max-tap-visits raises it\)' -- \
  "$poolspec" run 'max:f32:n1c1:w4:k1073741824:s1:pb536870912:pe536870912:floor' --input "$work/x4.npy" --output "$work/keep.npy"
bad 'over the limit of 1000 \(--max-tap-visits raises it\)' -- \
  "$poolspec" diff --op avg --input-shape 1,1,64,64 --pytorch 'kernel_size=3' --max-tap-visits 1000
bad '--max-tap-visits=0: must be 1 or more' -- "$poolspec" run "$p4" --input "$work/x.npy" --output "$work/keep.npy" --max-tap-visits 0
bad 'a replayed problem takes at most 4294967296' -- "$poolspec" certify --backend reference \
  --problem 'max:f32:n1c1:w4:k1073741824:s1:pb536870912:pe536870912:floor' --out "$work/cert"

# --- output paths: refused before any work when they collide or point nowhere ---
bad 'the same file' -- "$poolspec" run 'max:f32:n1c1:h4w4:k2x2:s2x2:pb0x0:pe0x0:floor:idx=plane' \
  --input "$work/x.npy" --output "$work/y.npy" --indices "$work/y.npy"
bad 'the same file' -- "$poolspec" run 'max:f32:n1c1:h4w4:k2x2:s2x2:pb0x0:pe0x0:floor:idx=plane' \
  --input "$work/x.npy" --output "$work/y.npy" --indices "$work/./y.npy"
bad "'-' \(standard output\) is given for two outputs" -- "$poolspec" run \
  'max:f32:n1c1:h4w4:k2x2:s2x2:pb0x0:pe0x0:floor:idx=plane' --input "$work/x.npy" --output - --indices -
bad 'a folder \(give a file name in it\)' -- "$poolspec" run "$p4" --input "$work/x.npy" --output "$work/folder"
bad "--output '': empty" -- "$poolspec" run "$p4" --input "$work/x.npy" --output ''
bad "--indices '': empty" -- "$poolspec" run 'max:f32:n1c1:h4w4:k2x2:s2x2:pb0x0:pe0x0:floor:idx=plane' --input "$work/x.npy" --output "$work/y.npy" --indices ''
bad "onnx-test '': an empty folder name" -- "$poolspec" onnx-test ''
bad 'the merged reports need a folder of their own' -- "$poolspec" certify merge "$work/folder" --out "$work/./folder"
bad '--waivers .*: not a regular file' -- "$poolspec" certify --backend reference --suite smoke --waivers /dev/zero --out "$work/cert"
bad '--waivers .*: not a regular file' -- "$poolspec" certify --backend reference --suite smoke --waivers "$work/folder" --out "$work/cert"
bad 'cannot create a file in its folder' -- "$poolspec" run "$p4" --input "$work/x.npy" --output "$work/missing/y.npy"
bad "--out '': must name a folder" -- "$poolspec" certify --backend reference --suite smoke --out ''
bad "--out '': must name a folder" -- "$poolspec" certify merge "$work/folder" --out ''
bad 'the input file; give the output a path of its own' -- "$poolspec" run "$p4" --input "$work/x.npy" --output "$work/./x.npy"
mkfifo "$work/fifo"
bad 'a FIFO, socket or block device' -- "$poolspec" run "$p4" --input "$work/x.npy" --output "$work/fifo"
bad 'not a .npy file' -- "$poolspec" run "$p4" --input "$work/fifo" --output "$work/y.npy"  # no writer: empty
[ ! -e "$work/y.npy" ] || fail "a refused run wrote y.npy"
# A character device is written, not replaced; a symbolic link's target is replaced, the link kept.
"$poolspec" run "$p4" --input "$work/x.npy" --output /dev/null >/dev/null 2>&1 || fail "run --output /dev/null failed"
[ -c /dev/null ] || fail "run --output /dev/null replaced the device"
ln -s "$work/target.npy" "$work/link.npy"
"$poolspec" run "$p4" --input "$work/x.npy" --output "$work/link.npy" >/dev/null 2>&1 || fail "run --output LINK failed"
[ -L "$work/link.npy" ] && [ -s "$work/target.npy" ] || fail "run --output LINK did not write through the link"

# --- a failure leaves an existing file as it was ---
bad 'empty=error' -- "$poolspec" run 'avg:f32:n1c1:h4w4:k1x1:s4x4:pb0x0:pe0x0:exclude:ceil' --input "$work/x.npy" --output "$work/keep.npy"
bad 'cannot create a file in its folder' -- "$poolspec" run 'max:f32:n1c1:h4w4:k2x2:s2x2:pb0x0:pe0x0:floor:idx=plane' \
  --input "$work/x.npy" --output "$work/keep.npy" --indices "$work/missing/i.npy"
[ "$(cat "$work/keep.npy")" = KEEP ] || fail "a failed run changed an existing output file"

# --- numbers the command does not know ---
bad '--opset=0: opsets are numbered from 1' -- "$poolspec" shape --op avg --input-shape 1,1,4,4 --opset 0 --onnx 'kernel_shape=2,2'
bad 'poolspec knows OpenVINO opsets 1 to 16' -- "$poolspec" shape --op avg --input-shape 1,1,4,4 --opset 999 \
  --openvino 'kernel="2,2" strides="2,2" exclude-pad="true" auto_pad="valid"'
bad 'poolspec knows ONNX opsets 1 to 22' -- "$poolspec" shape --op avg --input-shape 1,1,4,4 --opset 23 --onnx 'kernel_shape=2,2'
bad 'no case of suite smoke matches' -- "$poolspec" certify --backend reference --suite smoke --filter no-such-case --out "$work/cert"
mkdir -p "$work/cert/repro" && echo KEEP > "$work/cert/repro/bundle"  # an earlier run's
bad '--rules onnx: no backend chosen is held to them \(reference claims spec' -- "$poolspec" certify \
  --backend reference --suite smoke --rules onnx --out "$work/cert"
bad '--filter no-such-case: no case of suite smoke matches' -- "$poolspec" certify \
  --backend reference --suite smoke --filter no-such-case --out "$work/cert"
[ "$(cat "$work/cert/repro/bundle")" = KEEP ] || fail "a refused certify removed an earlier run's bundles"
bad '--input: only with --problem' -- "$poolspec" certify --backend reference --input "$work/x.npy" --out "$work/cert"
bad '--rules onnx,tosa: a replay judges its one problem under one rule set' -- "$poolspec" certify --backend reference \
  --problem "$p4" --rules onnx,tosa --out "$work/cert"
# The run's default typed out is two rule sets too.
bad '--rules claimed,openvino: a replay judges its one problem under one rule set' -- "$poolspec" certify \
  --backend reference --problem "$p4" --rules claimed,openvino --out "$work/cert"
# Integers are decimal and within their type: never clamped, wrapped or read in another base.
bad '99999999999999999999 is out of range \(-9223372036854775808 to 9223372036854775807\)' -- \
  "$poolspec" run "$p4" --input "$work/x.npy" --output "$work/keep.npy" --max-elements 99999999999999999999
bad "'0x10' is not a decimal integer" -- "$poolspec" certify --backend reference --jobs 0x10 --out "$work/cert"
bad '-1 is out of range \(0 to 4294967295\)' -- "$poolspec" prove --timeout-ms -1
bad '4294967296 is out of range \(0 to 4294967295\)' -- "$poolspec" prove --timeout-ms 4294967296
bad '2147483648 is out of range' -- "$poolspec" shape --op avg --input-shape 1,1,4,4 --opset 2147483648 --onnx 'kernel_shape=2,2'
bad "'1e3' is not a decimal integer" -- "$poolspec" explain "$p4" --input "$work/x.npy" --at 0,0,0,0 --max-taps 1e3
bad "'' is not a decimal integer" -- "$poolspec" certify --backend reference --timeout-ms '' --out "$work/cert"
bad '--progress-seconds -1: must be 0..86400' -- "$poolspec" certify --backend reference --progress-seconds -1 --out "$work/cert"

# --- what was printed must arrive ---
bad 'standard output: write error' -- bash -c "'$poolspec' shape '$p4' >/dev/full"

# --- the parser's own errors read the same way ---
bad "'shap' is not a command; did you mean 'shape'" -- "$poolspec" shap
bad 'no-such-flag' -- "$poolspec" run --no-such-flag
# Misspelt options and certify's subcommand: the nearest one is named.
bad '--inptu: not an option of poolspec run; did you mean --input\?' -- "$poolspec" run "$p4" --inptu "$work/x.npy"
bad '--max-element: not an option of poolspec shape; did you mean --max-elements\?' -- "$poolspec" shape "$p4" --max-element=8
bad '-json: poolspec diff takes options with two dashes; did you mean --json\?' -- "$poolspec" diff --op avg --pytorch 'kernel_size=2' --input-shape 1,1,4 -json
bad "'merg' is not a command of certify; did you mean 'merge'\?" -- "$poolspec" certify merg "$work/a" "$work/b"
bad '--sute: not an option of poolspec certify; did you mean --suite\?' -- "$poolspec" certify --sute smoke
bad '--ouput: not an option of poolspec certify merge; did you mean --out\?' -- "$poolspec" certify merge "$work/a" --ouput "$work/b"

ls -A "$work" | grep -q 'poolspec-partial' && fail "a temporary file was left behind"

# --- with --json, a refusal is a JSON document on stdout too ---
json_error() {  # PATTERN -- COMMAND...: exit 2, and stdout is one JSON error document matching it
  local pattern=$1
  shift 2
  rows=$((rows + 1))
  local out status
  out=$(timeout 20 "$@" 2>/dev/null)
  status=$?
  [ "$status" -eq 2 ] || { fail "exit $status (wanted 2): $*"; return; }
  grep -Eq -- "^\{\"error\":\{\"exit_code\":2,\"message\":\".*$pattern.*\"\},\"schema\":\"poolspec.error/1\"\}$" <<<"$out" ||
    { fail "no JSON error /$pattern/ on stdout of: $*"; echo "$out" | head -3; }
}
json_error 'kernel\[0\]=0' -- "$poolspec" shape --json 'avg:f32:n1c1:w4:k0:s1:pb0:pe0:exclude:floor'
json_error 'no-such-flag' -- "$poolspec" run --json --no-such-flag
json_error 'a folder, not a .npy file' -- "$poolspec" explain --json "$p4" --input "$work/folder" --at 0,0,0,0
json_error 'no case of suite smoke matches' -- "$poolspec" certify --json --backend reference --suite smoke --filter nothing --out "$work/cert"

# --- "-": standard input and standard output ---
out=$("$poolspec" run "$p4" --input - --output - <"$work/x.npy" 2>"$work/report.txt" | head -c 6 | od -An -c | tr -d ' ')
[ "$out" = '223NUMPY' ] || fail "run --input - --output - did not write a .npy file to stdout (got '$out')"
grep -q 'wrote    -' "$work/report.txt" || fail "run --output -: the report is not on stderr"

echo "$rows bad inputs, $failures failures"
[ "$failures" -eq 0 ]
