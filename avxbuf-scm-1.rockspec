rockspec_format = "3.0"
package = "avxbuf"
version = "scm-1"
-- Built from a checkout with `luarocks make`; there is no published source yet.
source = { url = "file://." }
description = {
  summary = "Fast bulk byte-buffer copy, zero and fill for Lua, with a CPU policy for AVX-512",
  detailed = [[
SSE2, AVX, AVX2 and AVX-512 kernels for memmove/memset-style work on aligned
Lua buffers, HotSpot-style knobs (use_avx, max_vector_size, avx3_threshold,
vector_zeroing), and a default that avoids 512-bit instructions on the Intel
cores whose turbo licence they lower (Skylake-SP, Cascade Lake, Cooper Lake).]],
  license = "MIT",
}
-- Lua 5.1 to 5.4 and LuaJIT 2.1. Nothing else: the specs use Debian's lua-unit,
-- and the benchmarks lua-argparse and lua-cjson (also rocks, for those who
-- have the LuaRocks server: luaunit, argparse, lua-cjson).
dependencies = { "lua >= 5.1, < 5.5" }
build = {
  type = "builtin",
  -- No per-file flags in the builtin build: ISA code uses target attributes.
  modules = {
    avxbuf = {
      sources = {
        "src/lavxbuf.c", "src/cpu.c", "src/policy.c", "src/settings.c", "src/dispatch.c",
        "src/kernels/sse2.c", "src/kernels/avx.c", "src/kernels/avx2.c",
        "src/kernels/avx512.c", "src/kernels/erms.c", "src/kernels/libc.c",
      },
      defines = { "_POSIX_C_SOURCE=200809L" },
      incdirs = { "src" },
      libraries = { "pthread" },
    },
    ["avxbuf.counters"] = { sources = { "src/counters.c" } },
    ["avxbuf.bench"] = "lua/avxbuf/bench.lua",
    ["avxbuf.events"] = "lua/avxbuf/events.lua",
    ["avxbuf.ffi"] = "lua/avxbuf/ffi.lua",
    ["avxbuf.transform"] = "lua/avxbuf/transform.lua",
    ["avxbuf.kernels"] = "lua/avxbuf/kernels.lua",
    ["avxbuf.svg"] = "lua/avxbuf/svg.lua",
  },
}
test = { type = "command", command = "make test" }
