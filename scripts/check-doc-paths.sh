#!/usr/bin/env bash
# Every repository path a doc names exists: each `back-ticked` token that
# starts with a top-level directory of the tree, and the first word of each
# unindented line in a fenced block (the layout listing). Patterns (<x>, *,
# {a,b}, ...) are skipped. Run from anywhere; paths are the repository's:
#   scripts/check-doc-paths.sh docs/architecture.md [more.md ...]
set -euo pipefail
cd "$(dirname "$0")/.."
top='(\.ci|apps|bench|clients|cmake|docs|examples|fuzz|include|packaging|schema|scripts|src|tests)/'
missing=$(
  for doc in "$@"; do
    {
      grep -o '`[^`]*`' "$doc" | tr -d '`' || true
      awk '/^```/ { fenced = !fenced; next } fenced && /^[^ ]/ { print $1 }' "$doc"
    } | grep -E "^${top}" | grep -vE '[<>*{}[:space:]]|\.\.\.' | sed -E 's/[.,:;)]+$//' | sort -u |
      while read -r path; do
        [ -e "$path" ] && continue
        echo "$doc: $path does not exist"
      done
  done
)
[ -z "$missing" ] || { echo "$missing" >&2; exit 1; }
