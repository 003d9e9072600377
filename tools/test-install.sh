#!/usr/bin/env bash
# Installs the source rock `make dist` wrote with LuaRocks from a local rocks
# server and nothing else (no network), for Lua 5.4 and for LuaJIT, and
# checks each install loads, reports include/avxbuf.h's version and works.
#   tools/test-install.sh   (what `make test-install` runs, after `make dist`)
# Needs: the dist group of tools/deps.sh, and LuaJIT (it installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${VERSION:-$(sed -n 's/^#define AVXBUF_VERSION "\(.*\)"/\1/p' include/avxbuf.h)}
server=$PWD/build/dist/server
check="local a = require \"avxbuf\"; local b = a.new(); b:put(\"ok\"); assert(b:tostring() == \"ok\");
  assert(a.version == \"$VERSION\", a.version);
  assert(require(\"avxbuf.counters\").clock() > 0); print(_VERSION .. \": installed avxbuf \" .. a.version .. \", \" .. a.cpu().reason)"
tools/deps.sh build luajit
set -x
rm -rf build/dist/server build/dist/tree-5.4 build/dist/tree-5.1 && mkdir -p build/dist/server
cp "build/dist/avxbuf-$VERSION-1.src.rock" build/dist/server/ && luarocks-admin make_manifest build/dist/server >/dev/null
luarocks --lua-version 5.4 install avxbuf --only-server="$server" --tree build/dist/tree-5.4
LUA_PATH="build/dist/tree-5.4/share/lua/5.4/?.lua;;" LUA_CPATH="build/dist/tree-5.4/lib/lua/5.4/?.so" \
  lua5.4 -e "$check"
test -f "$(luarocks --lua-version 5.4 --tree build/dist/tree-5.4 show --rock-dir avxbuf)/include/avxbuf.h"
luarocks --lua-version 5.1 install avxbuf --only-server="$server" --tree build/dist/tree-5.1 \
  LUA_INCDIR=/usr/include/luajit-2.1
LUA_PATH="build/dist/tree-5.1/share/lua/5.1/?.lua;;" LUA_CPATH="build/dist/tree-5.1/lib/lua/5.1/?.so" \
  luajit -e "$check assert(a.ffi, \"the FFI path\")"
