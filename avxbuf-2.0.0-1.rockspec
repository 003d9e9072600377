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
            "src/lavxbuf.c",
            "src/lmodule.c",
            "src/gcpoints.c",
            "src/largs.c",
            "src/lbuffer.c",
            "src/linspect.c",
            "src/lpack.c",
            "src/packfmt.c",
            "src/lmatch.c",
            "src/match.c",
            "src/lio.c",
            "src/lformat.c",
            "src/lsplit.c",
            "src/lsettings.c",
            "src/lcpu.c",
            "src/lmeasure.c",
            "src/lcapi.c",
            "src/lluajit.c",
            "src/lembed.c",
            "src/cpu.c",
            "src/policy.c",
            "src/settings.c",
            "src/dispatch.c",
            "src/clock.c", "src/buffer.c",
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
         sources = {
            "src/counters.c"
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
