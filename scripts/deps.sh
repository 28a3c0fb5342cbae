#!/usr/bin/env bash
# Installs what Vigil and its tests need beyond Go, through the system package
# manager (Debian/Ubuntu apt-get): ugrep and ripgrep (search backends), mpv
# (the real media device in tests), openssl (lease keys made outside Go), tmux
# (a real terminal for the TUI's end-to-end tests).
set -euo pipefail
need=()
command -v ugrep >/dev/null 2>&1 || need+=(ugrep)
command -v rg >/dev/null 2>&1 || need+=(ripgrep)
command -v mpv >/dev/null 2>&1 || need+=(mpv)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
command -v tmux >/dev/null 2>&1 || need+=(tmux)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "installing with apt-get: ${need[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi
