#!/usr/bin/env bash
# Installs what building and testing WatchRelay needs and is missing: Debian packages
# (apt-get) and Python test tools (PyPI). Idempotent; fast when everything is present.
set -euo pipefail

# libwebsockets-evlib-ev + libev-dev: the lws contexts run on libev (epoll) instead of poll().
# chromium: the console's browser test (headless, driven over its DevTools pipe).
# librsvg2-bin: rsvg-convert, to turn the widget strips and watch faces (SVG) into PNG.
# libhiredis-dev + redis-server: `serve --store redis://…` and the tests that run it on a redis-server of their own.
DEB_PACKAGES=(libwebsockets-dev libwebsockets-evlib-ev libev-dev libsqlite3-dev libssl-dev libhiredis-dev redis-server pkg-config chromium librsvg2-bin ${EXTRA_DEB_PACKAGES:-})
# MODULE:REQUIREMENT; the test clients use websockets' asyncio API (13 and later): an older
# websockets (Debian's python3-websockets is 10.4) imports but lacks it, and is upgraded.
PY_MODULES=(jsonschema:jsonschema referencing:referencing "websockets.asyncio.client:websockets>=13")

missing=()
for p in "${DEB_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
    echo "install-deps: missing Debian packages: ${missing[*]}"
    if [ "$(id -u)" -eq 0 ]; then
        SUDO=""
    elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
        SUDO="sudo"
    else
        echo "install-deps: not root and no password-less sudo; install them with:" >&2
        echo "    sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
    # A machine that never ran apt-get update has empty lists: update first.
    if [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v -e lock -e partial)" ] || [ -n "${APT_UPDATE:-}" ]; then
        $SUDO apt-get update -qq
    fi
    if ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"; then
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
    fi
fi

pip_missing=()
for entry in "${PY_MODULES[@]}"; do
    module=${entry%%:*}
    package=${entry#*:}
    python3 -c "import $module" 2>/dev/null || pip_missing+=("$package")
done
if ((${#pip_missing[@]})); then
    echo "install-deps: installing Python test tools: ${pip_missing[*]}"
    python3 -m pip install --quiet "${pip_missing[@]}"
fi
