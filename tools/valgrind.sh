#!/usr/bin/env bash
# The suite under memcheck, plain build (AVX2 natively) and emulated flavour
# (the AVX-512 logic: valgrind cannot execute AVX-512), two lanes at once:
# zero errors, zero definite leaks; child processes run without valgrind.
#   tools/valgrind.sh   (what `make valgrind` runs; LUA: lua5.4; needs valgrind)
set -euo pipefail
cd "$(dirname "$0")/.."
LUA=${LUA:-lua5.4}
make --no-print-directory suite
valgrind="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite"
set -x
tools/at-once.sh "AVXBUF_SPEC_DIR=build AVXBUF_SPEC_LIGHT=1 AVXBUF_SPEC_VALGRIND=1 $valgrind $LUA spec/run.lua" \
  "AVXBUF_SPEC_DIR=build/emul AVXBUF_SPEC_LIGHT=1 AVXBUF_SPEC_VALGRIND=1 $valgrind $LUA spec/run.lua"
