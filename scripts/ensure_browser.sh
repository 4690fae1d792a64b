#!/bin/sh
# A Chromium for the real-browser tests (`make test` runs this first; usage: ensure_browser.sh VENV_BIN).
# Debian's chromium when it is there or apt can install it (as root); else Playwright's own build
# (`playwright install chromium`, which tests/e2e/harness.py then uses). If neither works, one line
# says what to install, and the exit status stops `make test` before any test runs.
BIN=${1:-.venv/bin}

if [ -n "${CHROMIUM_PATH:-}" ] && [ -x "$CHROMIUM_PATH" ]; then exit 0; fi
if [ -x /usr/bin/chromium ] || command -v chromium >/dev/null 2>&1; then exit 0; fi

if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "make test: installing Debian's chromium for the browser tests (apt-get)..."
  if DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; then
    exit 0
  fi
fi

echo "make test: getting Playwright's Chromium for the browser tests (playwright install chromium)..."
if "$BIN/playwright" install chromium >/dev/null 2>&1; then exit 0; fi

echo "make test: no Chromium for the browser tests: install Debian's (sudo apt-get install chromium) or Playwright's ($BIN/playwright install chromium), or set CHROMIUM_PATH to a Chromium executable" >&2
exit 1
