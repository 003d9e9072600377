#!/usr/bin/env bash
# The suite on aarch64: module and spec/runner.c cross-compiled (portable
# kernels: the C library) against Debian's arm64 Lua 5.4, run under qemu.
#   tools/test-aarch64.sh   (what `make test-aarch64` runs; no variables)
# Needs: the aarch64 group of tools/deps.sh (cross gcc, qemu-user).
set -euo pipefail
cd "$(dirname "$0")/.."
# Specs that start child processes are skipped (the children would be host
# binaries), and so are those needing perf_event_open, which qemu-user lacks.
tools/deps.sh aarch64
tools/deps.sh lua-for arm64 build/lua-arm64
# Debian's arm64 Lua, unpacked by tools/deps.sh; its static library linked
# into the runner, which exports the Lua API (-Wl,-E) to the module.
lua_inc="-Ibuild/lua-arm64/usr/include/lua5.4 -Ibuild/lua-arm64/usr/include/aarch64-linux-gnu"
lua_lib="build/lua-arm64/usr/lib/aarch64-linux-gnu/liblua5.4.a -Wl,-E -lm -ldl"
make --no-print-directory native build/aarch64/capi.so BUILD=build/aarch64 CC=aarch64-linux-gnu-gcc LUA_INC="$lua_inc"
set -x
# shellcheck disable=SC2086 # the flags are words
aarch64-linux-gnu-gcc -O2 $lua_inc -o build/aarch64/runner spec/runner.c $lua_lib
AVXBUF_SPEC_DIR=build/aarch64 AVXBUF_SPEC_NO_CHILDREN=1 AVXBUF_SPEC_QEMU=1 \
  qemu-aarch64 -L /usr/aarch64-linux-gnu build/aarch64/runner spec/run.lua
