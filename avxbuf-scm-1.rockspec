rockspec_format = "3.0"
package = "avxbuf"
version = "scm-1"
-- Built from a checkout with `luarocks make`; releases have their own
-- rockspec (avxbuf-X.Y.Z-1.rockspec, made from this one by `make release-rockspec`).
source = { url = "git+https://github.com/avxbuf/avxbuf.git" }
description = {
  summary = "Fast byte buffers for Lua: SIMD copy/zero/fill, growth, typed access, and an AVX-512 policy",
  detailed = [[
Aligned, growable byte buffers for Lua 5.1-5.4 and LuaJIT with SSE2, AVX, AVX2
and AVX-512 kernels for copy, zero and fill; HotSpot-style knobs (use_avx,
max_vector_size, avx3_threshold, vector_zeroing); and a default that avoids
512-bit instructions on the Intel cores whose turbo licence they lower
(Skylake-SP, Cascade Lake, Cooper Lake). A C API lets other modules use the
buffers.]],
  homepage = "https://github.com/avxbuf/avxbuf",
  license = "MIT",
}
-- Lua 5.1 to 5.4 and LuaJIT 2.1; nothing else at run time. The specs use
-- Debian's lua-unit, the benchmarks lua-argparse and lua-cjson.
dependencies = { "lua >= 5.1, < 5.5" }
build = {
  type = "builtin",
  -- No per-file flags in the builtin build: ISA code uses target attributes.
  -- The Makefile's SRC, which make lint checks this list against.
  modules = {
    avxbuf = {
      sources = {
        "src/lua/lavxbuf.c", "src/lua/lmodule.c", "src/lua/gcpoints.c", "src/lua/largs.c", "src/lua/lbuffer.c", "src/lua/linspect.c", "src/lua/lpack.c", "src/core/packfmt.c",
        "src/lua/lmatch.c", "src/core/match.c",
        "src/lua/lio.c", "src/lua/lformat.c", "src/lua/lsplit.c", "src/lua/lsettings.c", "src/lua/lcpu.c", "src/measure/lmeasure.c", "src/lua/lcapi.c",
        "src/luajit/lluajit.c", "src/lua/lembed.c",
        "src/core/cpu.c", "src/core/policy.c", "src/core/settings.c", "src/core/dispatch.c", "src/core/measured.c", "src/core/clock.c", "src/core/buffer.c",
        "src/kernels/sse2.c", "src/kernels/avx.c", "src/kernels/avx2.c",
        "src/kernels/avx512.c", "src/kernels/erms.c", "src/kernels/libc.c", "src/kernels/twoway.c", "src/kernels/offsets.c", "src/kernels/registry.c",
      },
      defines = { "_POSIX_C_SOURCE=200809L" },
      incdirs = { "src" },
      libraries = { "pthread" },
    },
    ["avxbuf.counters"] = { sources = { "src/counters/counters.c" }, incdirs = { "src" } },
    -- the counters' event tables (the LuaJIT path and tune are compiled into avxbuf: src/lua/lembed.c)
    ["avxbuf.events"] = "lua/avxbuf/events.lua",
  },
  -- the C API header, for modules built against this rock:
  -- $(luarocks show --rock-dir avxbuf)/include/avxbuf.h
  copy_directories = { "include" },
}
test = { type = "command", command = "make test" }
