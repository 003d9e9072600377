#!/usr/bin/env bash
# The collector-torture build (src/lua/gcpoints.h) under ASan: wherever the
# binding may run the collector it runs a full collection, so the finalizers
# spec/gc_spec.lua arms run at every such point; on Lua 5.4, 5.1 and LuaJIT.
#   tools/test-gc.sh   (what `make test-gc` runs; no variables)
# Needs: the hardening group of tools/deps.sh (it installs Lua 5.1 and LuaJIT).
set -euo pipefail
cd "$(dirname "$0")/.."
# The specs of the binding's own functions (the kernel and policy specs meet
# no new point, and take minutes there) and avxbuf.counters, which links the
# same points; on 5.1 the API collects before it copies, on LuaJIT
# spec/gc_spec.lua runs the FFI path with the JIT off and on.
specs=(TestCollectorInCalls TestBuffer TestCApi TestBadInput TestGrowth TestForgery TestMemory
  TestFind TestRfind TestCompare TestHex TestIO TestPack TestRecords TestSplit TestStream TestCounters)
# Most of the time: every capture a string pushed, every push a collection.
pattern_specs="TestMatch TestGmatch"
tools/deps.sh build luajit
tools/deps.sh build lua5.1
torture="$(tools/asan.sh --cflags) -DAVXBUF_GC_TORTURE"
for lua in lua5.4 luajit lua5.1; do
  d=build/torture; [ $lua = lua5.4 ] || d=build/torture-$lua
  make --no-print-directory native $d/capi.so $d/capi_future/capi.so LUA=$lua BUILD=$d SAN="$torture"
done
set -x
lua5.4 tools/layers.lua -D AVXBUF_GC_TORTURE --objects build/torture/obj src
# Two lanes at once: the pattern specs and 5.1, the rest and LuaJIT.
tools/at-once.sh "AVXBUF_SPEC_TORTURE=1 tools/asan.sh lua5.4 spec/run.lua build/torture -- $pattern_specs \
   && tools/asan.sh lua5.1 spec/run.lua build/torture-lua5.1 -- ${specs[*]}" \
  "tools/asan.sh lua5.4 spec/run.lua build/torture -- ${specs[*]} \
   && tools/asan.sh luajit spec/run.lua build/torture-luajit -- ${specs[*]}"
