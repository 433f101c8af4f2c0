#!/usr/bin/env bash
# npm test: the typecheck, the lint and the test suite, side by side rather than one after another:
# the suite spends most of its time waiting on child processes, servers and the disk, so the two
# checks cost it little. A check's output is shown once the suite has ended (or at once, if it
# failed); the exit code is non-zero when any of the three failed. Arguments go to vitest.
set -uo pipefail
cd "$(dirname "$0")/.."
out="$(mktemp -d "${TMPDIR:-/tmp}/schoolbridge-test.XXXXXX")"
trap 'rm -rf "$out"' EXIT

check() {
  local name=$1
  shift
  if "$@" >"$out/$name" 2>&1; then
    echo 0 >"$out/$name.status"
  else
    echo 1 >"$out/$name.status"
    echo "test: $name FAILED:" >&2
    cat "$out/$name" >&2
  fi
}

check typecheck npm run --silent typecheck &
typecheck=$!
check lint npm run --silent lint &
lint=$!
node node_modules/vitest/vitest.mjs run "$@"
suite=$?
wait "$typecheck" "$lint"

status=$suite
for name in typecheck lint; do
  if [ "$(cat "$out/$name.status")" = 0 ]; then echo "test: $name passed"; else status=1; fi
done
echo "test: vitest exited $suite"
exit "$status"
