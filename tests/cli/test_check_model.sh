#!/usr/bin/env bash
# `poolspec check-model` on whole models: the model zoo's pooling layers (tests/models, encoded
# by protoc here), a hand-made OpenVINO IR with every pooling operator version, and the real
# ONNX files of libonnx-testdata (PyTorch's exports and the backend node tests, evaluated and
# compared with their stored outputs). Every output shape a model states was worked out
# independently (tests/models/README.md); the mutated copies must fail.
# Usage: test_check_model.sh path/to/poolspec path/to/protoc tests/models libonnx-testdata/data
set -u
poolspec=$1 protoc=$2 models=$3 testdata=$4
source "$(dirname "$0")/checks.sh"

# Text output fits 100 columns, but for a problem string longer than that on a line of its own
# (never broken: it is copied into other commands).
narrow() {
  local wide
  wide=$(awk 'length > 100 && !/^    (avg|max):[^ ]*$/' <<<"$out")
  [ -z "$wide" ] || { fail "lines over 100 columns in: $*"; echo "$wide" | head -3; }
}

encode() { "$protoc" --encode=onnx.ModelProto -I/usr/include/onnx /usr/include/onnx/onnx.proto <"$1" >"$2"; }

# --- the model zoo's pooling layers -----------------------------------------------------------
encode "$models/zoo_pooling.textproto" "$work/zoo.onnx" || fail "protoc could not encode zoo_pooling.textproto"
expect 0 '10 checked, 0 invalid, 0 not checked, 0 with findings' -- "$poolspec" check-model "$work/zoo.onnx"
narrow "check-model zoo.onnx"
for node in resnet50.maxpool resnet50.avgpool googlenet.maxpool1 inception_v3.Mixed_5b.branch_pool \
            densenet121.transition1.pool alexnet.features.2 vgg16.features.4 'inception_v1.pool1/3x3_s2' \
            squeezenet1_0.features.2 squeezenet1_0.features.6; do
  grep -q "^$node  ONNX " <<<"$out" || fail "zoo: node $node not reported"
done
grep -q 'batch .N. taken as 1' <<<"$out" || fail "zoo: the symbolic batch size is not reported"
grep -q '1x96x54x54 by libonnx.s shape inference: agrees' <<<"$out" ||
  fail "zoo: the intermediate shape (through Relu) did not come from shape inference"
expect 0 '"schema":"poolspec.check-model/1"' -- "$poolspec" check-model "$work/zoo.onnx" --json
[ "$(grep -o '"stated_agrees":true' <<<"$out" | wc -l)" -eq 10 ] || fail "zoo --json: not 10 stated shapes agreeing"
# A model that states a wrong shape: googlenet's ceil-mode pool said to give 55 (floor's count).
sed '/name: "googlenet.maxpool1.out"/s/dim_value: 56 } dim { dim_value: 56/dim_value: 55 } dim { dim_value: 55/' \
  "$models/zoo_pooling.textproto" >"$work/wrong.textproto"
encode "$work/wrong.textproto" "$work/wrong.onnx"
expect 1 'FINDING +output shape: 1x64x55x55 by the model, 1x64x56x56 by ONNX MaxPool-12' -- \
  "$poolspec" check-model "$work/wrong.onnx"
# A symbolic batch given a size; a name that is nothing in the model.
expect 0 'shape +f32 8x64x112x112 -> 8x64x56x56' -- "$poolspec" check-model "$work/zoo.onnx" --shape resnet50.maxpool.in=8,64,112,112
expect 2 "--shape nothing: the model has no pooling node or graph input of that name" -- \
  "$poolspec" check-model "$work/zoo.onnx" --shape nothing=1,2,3,4

# --- a hand-made OpenVINO IR: AvgPool-1, MaxPool-1, MaxPool-8, MaxPool-14, AvgPool-14 ---------
expect 0 '5 checked, 0 invalid, 0 not checked, 0 with findings' -- "$poolspec" check-model "$models/pooling_layers.xml"
narrow "check-model pooling_layers.xml"
for op in 'avg1  OpenVINO AvgPool-1' 'max1  OpenVINO MaxPool-1' 'max8  OpenVINO MaxPool-8' \
          'max14  OpenVINO MaxPool-14' 'avg14  OpenVINO AvgPool-14'; do
  grep -q "^$op " <<<"$out" || fail "IR: no '$op'"
done
# AvgPool-14 counts the padding past the input (include_full): ONNX's and PyTorch's rules do not.
grep -Eq 'differs +onnx@22: at \(0,0,0,7\)' <<<"$out" || fail "IR: avg14's difference from ONNX not shown"
# MaxPool-14's ceil_torch drops the window that starts in the end padding; read as MaxPool-1's
# ceil, the output would have 8 columns: a reader that ignored the layer's version fails here.
sed '/name="max14"/,/<\/layer>/s|<dim>7</dim><dim>7</dim>|<dim>8</dim><dim>8</dim>|' "$models/pooling_layers.xml" >"$work/wrong.xml"
expect 1 'FINDING +output shape: 1x4x8x8 by the IR, 1x4x7x7 by OpenVINO MaxPool-14' -- "$poolspec" check-model "$work/wrong.xml"

# --- real ONNX files: PyTorch's exports (AvgPool1d: the pool between Unsqueeze and Squeeze) -----
for model in "$testdata"/pytorch-converted/test_*Pool*/model.onnx "$testdata"/pytorch-operator/test_operator_maxpool/model.onnx; do
  expect 0 '1 checked, 0 invalid, 0 not checked, 0 with findings' -- "$poolspec" check-model "$model"
done
# ... and the backend node tests, each evaluated on its stored input and compared with its output.
cases=0
for dir in "$testdata"/node/test_*pool*; do
  case $dir in *maxunpool*) continue ;; esac
  node=$("$poolspec" check-model "$dir/model.onnx" --json | grep -o '"name":"[^"]*"' | head -1 | cut -d'"' -f4)
  expect 0 'expected +matches' -- "$poolspec" check-model "$dir/model.onnx" \
    --input "$node=$dir/test_data_set_0/input_0.pb" --expect "$node=$dir/test_data_set_0/output_0.pb"
  cases=$((cases + 1))
done
[ "$cases" -ge 30 ] || fail "only $cases ONNX node tests found"
# A runtime whose average counted the padding: the stored output of the count_include_pad case
# against the model that excludes it.
d="$testdata/node/test_averagepool_2d_pads"
expect 1 'expected +DIFFERS: output \(0,0,0,0\)' -- "$poolspec" check-model "$d/model.onnx" \
  --input "AveragePool_0=$d/test_data_set_0/input_0.pb" \
  --expect "AveragePool_0=$testdata/node/test_averagepool_2d_pads_count_include_pad/test_data_set_0/output_0.pb"

# --- outputs: one .npy per evaluated node, byte for byte what `run` writes --------------------
d="$testdata/node/test_maxpool_2d_pads"
mkdir "$work/out"
expect 0 "output +$work/out/MaxPool_0.npy" -- "$poolspec" check-model "$d/model.onnx" \
  --input "MaxPool_0=$d/test_data_set_0/input_0.pb" --output-dir "$work/out"
expect 0 'expected +matches exactly' -- "$poolspec" check-model "$d/model.onnx" \
  --input "MaxPool_0=$d/test_data_set_0/input_0.pb" --expect "MaxPool_0=$work/out/MaxPool_0.npy"
# A failure after the work leaves an existing output as it was.
printf 'KEEP' >"$work/out/MaxPool_0.npy"
expect 2 'missing.pb' -- "$poolspec" check-model "$d/model.onnx" --input "MaxPool_0=$d/test_data_set_0/input_0.pb" \
  --expect "MaxPool_0=$work/missing.pb" --output-dir "$work/out"
[ "$(cat "$work/out/MaxPool_0.npy")" = KEEP ] || fail "a failed check-model replaced an existing output"
[ "$(ls "$work/out")" = MaxPool_0.npy ] || fail "a failed check-model left files behind: $(ls "$work/out")"

# --- hostile models ------------------------------------------------------------------------------
# one_pool NAME OP ATTRIBUTES DIMS: a one-node ONNX model (opset 13) pooling graph input x.
one_pool() {
  local dims="" dim
  for dim in ${4//,/ }; do dims="$dims dim { dim_value: $dim }"; done
  printf '%s\n' 'ir_version: 8 opset_import { domain: "" version: 13 }' \
    "graph { name: \"g\" node { name: \"$1\" op_type: \"$2\" input: \"x\" output: \"y\" $3 }" \
    "input { name: \"x\" type { tensor_type { elem_type: 1 shape { $dims } } } } }" >"$work/one.textproto"
  encode "$work/one.textproto" "$work/one.onnx"
}
# A stride of 0: libonnx's shape inference would divide by it (a SIGFPE), so it is not run.
one_pool p MaxPool 'attribute { name: "kernel_shape" type: INTS ints: 3 ints: 3 } attribute { name: "strides" type: INTS ints: 0 ints: 0 }' 1,3,8,8
expect 1 'INVALID +strides\[0\]=0' -- "$poolspec" check-model "$work/one.onnx"
grep -q "shape inference not run: node 'p' (MaxPool) has a stride below 1" <<<"$out" || fail "zero strides: no note that inference was skipped"
# A name with an escape sequence and a newline is shown, not obeyed.
one_pool 'a\033[2Jb\nc' MaxPool 'attribute { name: "kernel_shape" type: INTS ints: 2 ints: 2 }' 1,1,4,4
expect 0 'a\\x1b\[2Jb\\x0ac  ONNX MaxPool-12' -- "$poolspec" check-model "$work/one.onnx"
! grep -q $'\x1b' <<<"$out" || fail "an escape character from a node name reached the terminal"
# A window whose comparison would be too much work is checked, and said not compared.
one_pool p MaxPool 'attribute { name: "kernel_shape" type: INTS ints: 256 ints: 256 }' 1,1,512,512
expect 0 'not compared +66049 outputs of 65536 taps each: over 2\^22' -- timeout 20 "$poolspec" check-model "$work/one.onnx"
# Inputs that cannot be used are bad input, not findings.
one_pool p MaxPool 'attribute { name: "kernel_shape" type: INTS ints: 2 ints: 2 }' 1,1,4,4
npy "$work/x5.npy" '<f4' '1, 1, 5, 5' "$(printf '\\x00\\x00\\x80\\x3f%.0s' $(seq 25))"
expect 2 "--input p: the node cannot be evaluated \\(not checked\\): --input: a tensor of shape \\(1,1,5,5\\) for an input the model states as 1x1x4x4" -- \
  "$poolspec" check-model "$work/one.onnx" --input "p=$work/x5.npy"
expect 2 '--shape x=-1,1,4,4: dimension -1 is negative' -- "$poolspec" check-model "$work/one.onnx" --shape x=-1,1,4,4
npy "$work/x4.npy" '<f4' '1, 1, 4, 4' "$(printf '\\x00\\x00\\x80\\x3f%.0s' $(seq 16))"
cp "$work/x4.npy" "$work/p.npy"
expect 2 "would replace the file given as --input p" -- "$poolspec" check-model "$work/one.onnx" --input "p=$work/p.npy" --output-dir "$work"
cmp -s "$work/x4.npy" "$work/p.npy" || fail "check-model replaced its own input"
# A node's name and a path may both hold '=': the split is at the '=' whose left part is a node.
mkdir "$work/run=1"
cp "$work/x4.npy" "$work/run=1/x=4.npy"
expect 0 "output +$work/run=1/p.npy" -- "$poolspec" check-model "$work/one.onnx" --input "p=$work/run=1/x=4.npy" \
  --output-dir "$work/run=1"
kernel2='attribute { name: "kernel_shape" type: INTS ints: 2 ints: 2 }'
printf '%s\n' 'ir_version: 8 opset_import { domain: "" version: 13 }' \
  "graph { name: \"g\" node { name: \"a\" op_type: \"MaxPool\" input: \"x\" output: \"y\" $kernel2 }" \
  "node { name: \"a=b\" op_type: \"AveragePool\" input: \"x\" output: \"z\" $kernel2 }" \
  'input { name: "x" type { tensor_type { elem_type: 1 shape { dim { dim_value: 1 } dim { dim_value: 1 }' \
  'dim { dim_value: 4 } dim { dim_value: 4 } } } } } }' >"$work/two.textproto"
encode "$work/two.textproto" "$work/two.onnx"
cp "$work/x4.npy" "$work/b=x.npy"
cp "$work/x4.npy" "$work/x.npy"
expect 2 "--input 'a=b=x.npy': ambiguous: both 'a' and 'a=b' name nodes, and both leave a file" -- \
  bash -c "cd '$work' && '$poolspec' check-model two.onnx --input a=b=x.npy"
# The whole model's comparisons are bounded: the first node's 36 tap visits leave 4 of 40.
expect 0 'not compared +36 tap visits, over the 4 the earlier nodes. comparisons left of the model.s 40' -- \
  "$poolspec" check-model "$work/two.onnx" --max-tap-visits 40
mkdir "$work/two-out"
expect 0 "output +$work/two-out/a_b.npy" -- \
  "$poolspec" check-model "$work/two.onnx" --input "a=b=$work/x4.npy" --output-dir "$work/two-out"

# --- bad input: refused, exit 2 -----------------------------------------------------------------
printf 'not a model' >"$work/junk.onnx"
printf '<net version="7"><layers/></net>' >"$work/v7.xml"
printf '<net version="11"><layers>' >"$work/cut.xml"
expect 2 'not a valid protobuf message' -- "$poolspec" check-model "$work/junk.onnx"
expect 2 'IR version .7.: poolspec reads IR versions 10 and 11' -- "$poolspec" check-model "$work/v7.xml"
expect 2 'not XML' -- "$poolspec" check-model "$work/cut.xml"
expect 2 'ends in neither .onnx nor .xml' -- "$poolspec" check-model "$work/junk.bin"
expect 2 'not a regular file' -- "$poolspec" check-model "$work" --format onnx
expect 2 '--input MaxPool_9: the model has no pooling node of that name \(its pooling nodes are MaxPool_0\)' -- \
  "$poolspec" check-model "$d/model.onnx" --input "MaxPool_9=$d/test_data_set_0/input_0.pb"
expect 2 "--expect MaxPool_0: give the node's --input too" -- \
  "$poolspec" check-model "$d/model.onnx" --expect "MaxPool_0=$d/test_data_set_0/output_0.pb"
expect 2 "--input 'MaxPool_0': give NODE=FILE" -- "$poolspec" check-model "$d/model.onnx" --input MaxPool_0
expect 2 '--output-dir: no node has an --input' -- "$poolspec" check-model "$d/model.onnx" --output-dir "$work"

if [ "$failures" -ne 0 ]; then echo "$failures check-model check(s) failed"; exit 1; fi
echo "check-model: every check passed ($cases node tests evaluated)"
