#!/usr/bin/env bash
# The whole suite, both flavours, against AddressSanitizer + UBSan builds in
# build/asan (tools/asan.sh: the flags, and the runtime preloaded).
#   tools/sanitize.sh   (what `make sanitize` runs; LUA: lua5.4)
# Needs: the hardening group of tools/deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
LUA=${LUA:-lua5.4}
make --no-print-directory suite BUILD=build/asan SAN="$(tools/asan.sh --cflags)"
echo "tools/asan.sh $LUA spec/run.lua build/asan build/asan/emul"
tools/asan.sh "$LUA" spec/run.lua build/asan build/asan/emul
