#!/usr/bin/env bash
# What the JavaScript client's tests need (clients/js): Node.js 18.19 or later
# with npm (Debian's nodejs and npm when none is installed), Debian's Chromium
# for the browser test, and the packages of the committed lockfile (npm ci,
# only when the lockfile changed since the last install).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  scripts/install-deps.sh nodejs npm
fi
node -e 'const [a, b] = process.versions.node.split(".").map(Number); if (a < 18 || (a === 18 && b < 19)) { console.error(`Node ${process.versions.node} is too old: the client needs 18.19 or later`); process.exit(1); }'
scripts/install-deps.sh chromium
cd clients/js
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
