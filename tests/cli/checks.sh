# Sourced by the command-line test scripts: a scratch folder removed on exit, a failure count,
# and the checks they share.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect CODE PATTERN -- COMMAND...: runs COMMAND, checks its exit code and that stdout+stderr
# match the extended regular expression PATTERN; the output is kept in $out.
expect() {
  local code=$1 pattern=$2
  shift 3
  local status
  out=$("$@" 2>&1)
  status=$?
  if [ "$status" -ne "$code" ]; then fail "exit $status (wanted $code): $*"; echo "$out" | head -8; return; fi
  grep -Eq -- "$pattern" <<<"$out" || { fail "no /$pattern/ in the output of: $*"; echo "$out" | head -8; }
}

# npy FILE DESCR SHAPE BYTES: writes a version 1.0 .npy file; BYTES is a printf escape string.
npy() {
  local dict="{'descr': '$2', 'fortran_order': False, 'shape': ($3), }"
  local len=$((${#dict} + 1))
  { printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $((len & 255)))\\x$(printf %02x $((len >> 8)))";
    printf '%s\n' "$dict"; printf "$4"; } >"$1"
}
