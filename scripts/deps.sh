#!/usr/bin/env bash
# Installs what Vigil and its tests need beyond Go, through the system package
# manager (Debian/Ubuntu apt-get): ugrep and ripgrep (search backends), mpv
# (the real media device in tests), openssl (lease keys made outside Go), tmux
# (a real terminal for the TUI's end-to-end tests), openssh-client (ssh and ssh-keygen: operators over
# vigil serve --ssh), systemd (systemd-analyze checks deploy/vigil.service), nats-server (Debian's 2.9, which the shared queue's tests
# must see refused), node and npm (the official
# MCP TypeScript SDK client in cli/mcp_ts_test.go, installed from its lockfile).
set -euo pipefail
need=()
command -v ugrep >/dev/null 2>&1 || need+=(ugrep)
command -v rg >/dev/null 2>&1 || need+=(ripgrep)
command -v mpv >/dev/null 2>&1 || need+=(mpv)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
command -v tmux >/dev/null 2>&1 || need+=(tmux)
{ command -v ssh && command -v ssh-keygen; } >/dev/null 2>&1 || need+=(openssh-client)
command -v systemd-analyze >/dev/null 2>&1 || need+=(systemd)
command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || need+=(nats-server)
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "installing with apt-get: ${need[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi
# the MCP client test's SDK, exactly as the lockfile pins it
ts="$(dirname "$0")/../cli/testdata/mcp-ts"
if [ ! -f "$ts/node_modules/@modelcontextprotocol/sdk/package.json" ]; then
  echo "installing the MCP TypeScript SDK with npm ci in cli/testdata/mcp-ts" >&2
  (cd "$ts" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
