#!/bin/sh
# Runs a script with Bun 1.4, installing Bun first when this machine has none, so the
# README's two commands work on a fresh clone with only Node.js, npm and git.
set -e
cd "$(dirname "$0")/.."
want="1.4.4"
have_bun() { command -v bun >/dev/null 2>&1 && case "$(bun --version)" in 1.4.*) return 0;; esac; return 1; }
if ! have_bun; then
  if [ -x .tools/node_modules/.bin/bun ]; then
    PATH="$PWD/.tools/node_modules/.bin:$PATH"
  else
    echo "Bun $want is not installed; installing it with npm..." >&2
    if ! npm install -g "bun@$want" >&2 2>/dev/null || ! have_bun; then
      # No permission for a global install: keep Bun inside the checkout instead.
      npm install --no-save --prefix .tools "bun@$want" >&2
      PATH="$PWD/.tools/node_modules/.bin:$PATH"
    fi
  fi
fi
bun install --frozen-lockfile >&2
exec bun "$@"
