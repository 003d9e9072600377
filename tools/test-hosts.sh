#!/usr/bin/env bash
# Real hosts (docs/hosts.md), avxbuf built for each one's Lua: nginx's Lua
# module (OpenResty's LuaJIT, unpacked) and HAProxy 2.6 (Lua 5.3) under a
# checked load on 127.0.0.1, then Neovim (LuaJIT) headless (tools/hosts/run.sh).
#   tools/test-hosts.sh   (what `make test-hosts` runs; HOSTS_BUILD: build/hosts)
# Needs: the hosts group of tools/deps.sh (apt-get as root or the packages there).
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTS_BUILD=${HOSTS_BUILD:-build/hosts}
tools/deps.sh hosts
tools/deps.sh nginx-lua "$HOSTS_BUILD/nginx-lua"
make --no-print-directory native LUA=luajit BUILD="$HOSTS_BUILD/luajit"
make --no-print-directory native LUA=lua5.3 BUILD="$HOSTS_BUILD/lua5.3"
echo "timeout 300 tools/hosts/run.sh $HOSTS_BUILD"
timeout 300 tools/hosts/run.sh "$HOSTS_BUILD"
