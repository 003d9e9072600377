rockspec_format = "3.0"
package = "avxbuf"
version = "2.0.0-1"
source = {
   url = "git+https://github.com/avxbuf/avxbuf.git",
   tag = "v2.0.0"
}
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
   license = "MIT"
}
dependencies = {
   "lua >= 5.1, < 5.5"
}
build = {
   type = "builtin",
   modules = {
      avxbuf = {
         defines = {
            "_POSIX_C_SOURCE=200809L"
         },
         incdirs = {
            "src"
         },
         libraries = {
            "pthread"
         },
         sources = {
            "src/lua/lavxbuf.c",
            "src/lua/lmodule.c",
            "src/lua/gcpoints.c",
            "src/lua/largs.c",
            "src/lua/lbuffer.c",
            "src/lua/linspect.c",
            "src/lua/lpack.c",
            "src/core/packfmt.c",
            "src/lua/lmatch.c",
            "src/core/match.c",
            "src/lua/lio.c",
            "src/lua/lformat.c",
            "src/lua/lsplit.c",
            "src/lua/lsettings.c",
            "src/lua/lcpu.c",
            "src/measure/lmeasure.c",
            "src/lua/lcapi.c",
            "src/luajit/lluajit.c",
            "src/lua/lembed.c",
            "src/core/cpu.c",
            "src/core/policy.c",
            "src/core/settings.c",
            "src/core/dispatch.c",
            "src/core/measured.c",
            "src/core/clock.c", "src/core/buffer.c",
            "src/kernels/sse2.c",
            "src/kernels/avx.c",
            "src/kernels/avx2.c",
            "src/kernels/avx512.c",
            "src/kernels/erms.c",
            "src/kernels/libc.c",
            "src/kernels/twoway.c",
            "src/kernels/offsets.c",
            "src/kernels/registry.c"
         }
      },
      ["avxbuf.counters"] = {
         incdirs = {
            "src"
         },
         sources = {
            "src/counters/counters.c"
         }
      },
      ["avxbuf.events"] = "lua/avxbuf/events.lua"
   },
   copy_directories = {
      "include"
   }
}
test = {
   type = "command",
   command = "make test"
}
