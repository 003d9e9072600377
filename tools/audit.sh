#!/usr/bin/env bash
# What avxbuf promises about instructions, checked on the compiled code
# (tools/audit.lua): the module built by GCC and clang at -O0 to -Os, and by
# LuaRocks' builtin build (one set of flags for every file), then the
# audit's own planted test; every check runs, then the status says.
#   tools/audit.sh   (what `make audit` runs; LUA: lua5.4, BUILD: build; needs the audit group of tools/deps.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
LUA=${LUA:-lua5.4}
BUILD=${BUILD:-$([ "$LUA" = lua5.4 ] && echo build || echo "build/$LUA")}
tools/deps.sh audit
make --no-print-directory modules BUILD="$BUILD"
echo "$LUA tools/layers.lua -U AVXBUF_GC_TORTURE --objects $BUILD/obj src"
"$LUA" tools/layers.lua -U AVXBUF_GC_TORTURE --objects "$BUILD/obj" src
# The emulated build answers which kernels vector_zeroing=false picks at use_avx=3.
fail=0
for cc in gcc clang; do
  for o in -O0 -O1 -O2 -O3 -Os; do
    d=build/audit/$cc$o
    make --no-print-directory -s native BUILD="$d" CC="$cc" CFLAGS="$o -g"
    "$LUA" tools/audit.lua --label "$cc $o" --select "$BUILD/emul/avxbuf.so" --select "$d/avxbuf.so" \
      "$d/avxbuf.so" "$d/avxbuf/counters.so" || fail=1
  done
done
rm -rf build/audit/luarocks
luarocks --lua-version 5.4 make --tree build/audit/luarocks avxbuf-scm-1.rockspec >build/audit/luarocks.log 2>&1 \
  || { cat build/audit/luarocks.log; exit 1; }
d=build/audit/luarocks/lib/lua/5.4
"$LUA" tools/audit.lua --label "luarocks builtin" --select "$BUILD/emul/avxbuf.so" --select "$d/avxbuf.so" \
  "$d/avxbuf.so" "$d/avxbuf/counters.so" || fail=1
"$LUA" tools/audit_planted.lua || fail=1
exit $fail
