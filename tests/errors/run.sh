#!/usr/bin/env bash
# Diagnostics are features: for every tests/errors/*.sy, `switchyard check FILE`
# must exit with status 1 and print on stderr the text of FILE.expected.
# Usage: tests/errors/run.sh path/to/switchyard
set -u
if [[ $# -ne 1 ]]; then
  echo "usage: $0 path/to/switchyard" >&2
  exit 2
fi
binary="$(realpath "$1")"
cd "$(dirname "$0")" || exit 2
passed=0
failed=0
for input in *.sy; do
  expected_file="${input%.sy}.expected"
  if [[ ! -f "$expected_file" ]]; then
    echo "FAIL $input: $expected_file is missing"
    failed=$((failed + 1))
    continue
  fi
  expected="$(cat "$expected_file")"
  actual="$("$binary" check "$input" 2>&1 >/dev/null)"
  status=$?
  if [[ $status -ne 1 ]]; then
    echo "FAIL $input: exit status $status, expected 1"
    failed=$((failed + 1))
  elif [[ "$actual" != *"$expected"* ]]; then
    printf 'FAIL %s: stderr lacks the expected text\n--- expected:\n%s\n--- stderr:\n%s\n' "$input" "$expected" "$actual"
    failed=$((failed + 1))
  else
    passed=$((passed + 1))
  fi
done
echo "$passed passed, $failed failed"
[[ $failed -eq 0 && $passed -gt 0 ]]
