#!/usr/bin/env bash
# The suite on Lua 5.1, 5.2, 5.3 and LuaJIT (5.4 is `make test`), each in its
# own build directory, two lanes at once (tools/at-once.sh).
#   tools/test-versions.sh   (what `make test-versions` runs; no variables)
# Needs: apt-get as root or the packages there (tools/deps.sh build LUA).
set -euo pipefail
cd "$(dirname "$0")/.."
# The packages first, so that no two apt-get runs meet; one flavour at a time
# in each lane (AVXBUF_SPEC_JOBS), as the lanes fill the two cores.
for v in lua5.1 lua5.2 lua5.3 luajit; do tools/deps.sh build $v; done
AVXBUF_SPEC_JOBS=1 tools/at-once.sh "make --no-print-directory test LUA=lua5.1 && make --no-print-directory test LUA=lua5.2" \
  "make --no-print-directory test LUA=luajit && make --no-print-directory test LUA=lua5.3"
