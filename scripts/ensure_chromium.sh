#!/usr/bin/env bash
# The browser tests drive Debian's Chromium (never a browser downloaded by Playwright).
# As root we install it; an ordinary user is told what to run.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "Installing Debian's chromium for the browser tests..."
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  exit 0
fi
echo "The browser tests need /usr/bin/chromium: run 'sudo apt-get install chromium'," >&2
echo "or set LABKIT_SKIP_BROWSER=1 to skip them (they then show as skipped, not passed)." >&2
[ "${LABKIT_SKIP_BROWSER:-0}" = 1 ] || exit 1
