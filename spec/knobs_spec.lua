-- Knob semantics, seen through avxbuf.kernel(); clamping to what the CPU
-- (or the emulated build) can run; AVXBUF_OPTIONS; per-state settings.
local lu = require "luaunit"
local h = require "helpers"
local avxbuf = h.avxbuf

local cpu = avxbuf.cpu()
local max_level = avxbuf.emulated and 3 or cpu.max_use_avx
local erms = cpu.features.erms
-- What each use_avx level runs at its full width.
local function family(level) return h.family(level, ({ [0] = 16, 32, 32, 64 })[level]) end
local movsb, stosb = h.string_kernel("copy"), h.string_kernel("fill")

TestKnobs = {}
TestKnobs.tearDown = avxbuf.reset

function TestKnobs.test_defaults_come_from_the_policy()
  local c = avxbuf.reset()
  lu.assertEquals(c, avxbuf.config())
  lu.assertEquals(c.use_avx, cpu.default.use_avx)
  lu.assertEquals(c.vector_zeroing, cpu.default.vector_zeroing)
  lu.assertEquals(c.avx3_threshold, cpu.default.avx3_threshold)
  lu.assertEquals(c.nontemporal_threshold, cpu.default.nontemporal_threshold)
  lu.assertEquals(c.rep_movsb_threshold, erms and cpu.default.rep_movsb_threshold or 0)
  lu.assertEquals(c.rep_movsb_stop_threshold, erms and cpu.default.rep_movsb_stop_threshold or 0)
  lu.assertEquals(c.rep_stosb_threshold, erms and cpu.default.rep_stosb_threshold or 0)
  lu.assertEquals(c.kernel, "auto")
  lu.assertEquals(c.max_vector_size, ({ [0] = 16, 32, 32, 64 })[c.use_avx])
end

function TestKnobs.test_use_avx_picks_the_family_and_clamps()
  h.needs_x86()
  for level = 0, 3 do
    local c = h.use { use_avx = level, avx3_threshold = 0 }
    local effective = math.min(level, max_level)
    lu.assertEquals(c.use_avx, effective, "use_avx=" .. level)
    lu.assertEquals(avxbuf.kernel("copy", 100), family(effective))
    lu.assertEquals(avxbuf.kernel("zero", 100), family(effective))
  end
end

function TestKnobs.test_max_vector_size()
  h.needs_x86()
  local c = h.use { use_avx = 2, max_vector_size = 16 }
  lu.assertEquals(c.max_vector_size, math.min(16, max_level >= 1 and 32 or 16))
  lu.assertEquals(avxbuf.kernel("copy", 100), h.family(2, 16))
  c = h.use { use_avx = 2, max_vector_size = 64 }      -- wider than AVX2 registers
  lu.assertEquals(c.max_vector_size, max_level >= 1 and 32 or 16)
  if max_level == 3 then
    h.use { use_avx = 3, max_vector_size = 32, rep_movsb_threshold = 0, nontemporal_threshold = 0 }
    lu.assertEquals(avxbuf.kernel("copy", 100000), h.family(3, 32))
    lu.assertEquals(avxbuf.kernel("zero", 100), h.family(3, 32))
    c = h.use { use_avx = 3 }
    lu.assertEquals(c.max_vector_size, 64)
  end
end

function TestKnobs.test_avx3_threshold()
  h.needs_x86()
  if max_level < 3 then
    lu.assertEquals(h.use { use_avx = 3 }.use_avx, max_level)
    return
  end
  h.use { use_avx = 3, avx3_threshold = 4096, rep_movsb_threshold = 0, rep_stosb_threshold = 0 }
  lu.assertEquals(avxbuf.kernel("copy", 4095), h.family(3, 32))
  lu.assertEquals(avxbuf.kernel("copy", 4096), h.family(3, 64))
  lu.assertEquals(avxbuf.kernel("fill", 4095), h.family(3, 32))
  lu.assertEquals(avxbuf.kernel("fill", 4096), h.family(3, 64))
  h.use { use_avx = 3, avx3_threshold = 0 }
  lu.assertEquals(avxbuf.kernel("copy", 100), h.family(3, 64))   -- (LuaJIT moves up to 64 bytes itself: "ffi")
end

function TestKnobs.test_vector_zeroing_false_keeps_vectors_out_of_zero_and_fill()
  h.needs_x86()
  local c = h.use { vector_zeroing = false, rep_stosb_threshold = 2048, nontemporal_threshold = 0 }
  lu.assertFalse(c.vector_zeroing)
  local xmm = h.family(c.use_avx, 16)
  lu.assertEquals(avxbuf.kernel("zero", 100), xmm)
  lu.assertEquals(avxbuf.kernel("fill", 2048), xmm, "rep stosb above the threshold, as glibc")
  lu.assertEquals(avxbuf.kernel("zero", 2049), erms and stosb or xmm)
  lu.assertEquals(avxbuf.kernel("copy", 100), family(c.use_avx), "copies keep their vectors")
end

function TestKnobs.test_rep_and_nontemporal_windows()
  h.needs_x86()
  local xmm, xmm_nt = h.family(0, 16), h.family(0, 16, "streaming")
  local c = h.use { use_avx = 0, rep_movsb_threshold = 1000, rep_stosb_threshold = 3000,
                    nontemporal_threshold = 5000 }
  if not erms then
    lu.assertEquals(c.rep_movsb_threshold, 0, "no ERMS: rep movsb is never used")
    lu.assertEquals(avxbuf.kernel("copy", 1000), xmm)
    return
  end
  lu.assertEquals(avxbuf.kernel("copy", 1000), xmm, "rep movsb above the threshold, as glibc")
  lu.assertEquals(avxbuf.kernel("copy", 1001), movsb)
  lu.assertEquals(avxbuf.kernel("copy", 4999), movsb)
  lu.assertEquals(avxbuf.kernel("copy", 5000), xmm_nt)
  lu.assertEquals(avxbuf.kernel("zero", 3000), xmm)
  lu.assertEquals(avxbuf.kernel("zero", 3001), stosb)
  lu.assertEquals(avxbuf.kernel("fill", 9999), stosb, "fills stream from twice the threshold")
  lu.assertEquals(avxbuf.kernel("fill", 10000), xmm_nt)
  h.use { use_avx = 0, rep_movsb_threshold = 0, rep_stosb_threshold = 0, nontemporal_threshold = 0 }
  lu.assertEquals(avxbuf.kernel("copy", 2 ^ 40), xmm, "0 means never")
  lu.assertEquals(avxbuf.kernel("zero", 2 ^ 40), xmm)
  -- a window with an end, as glibc's rep_movsb_stop_threshold
  h.use { use_avx = 0, rep_movsb_threshold = 1000, rep_movsb_stop_threshold = 3000, nontemporal_threshold = 5000 }
  lu.assertEquals(avxbuf.kernel("copy", 1000), xmm)
  lu.assertEquals(avxbuf.kernel("copy", 1001), movsb)
  lu.assertEquals(avxbuf.kernel("copy", 2999), movsb)
  lu.assertEquals(avxbuf.kernel("copy", 3000), xmm)
  lu.assertEquals(avxbuf.kernel("copy", 5000), xmm_nt)
  local d, s = avxbuf.new(4000), avxbuf.from(h.pattern(4000, 8))
  for _, n in ipairs { 999, 1000, 2999, 3000, 3999 } do
    d:zero()
    avxbuf.copy(d, 1, s, 1, n)
    h.assert_bytes(d:tostring(), s:tostring(1, n) .. ("\0"):rep(4000 - n), "copy of " .. n)
  end
end

function TestKnobs.test_kernel_libc_and_back()
  h.needs_x86()
  h.use { kernel = "libc" }
  for _, n in ipairs { 0, 100, 2 ^ 30 } do
    lu.assertEquals(avxbuf.kernel("copy", n), "libc")
    lu.assertEquals(avxbuf.kernel("fill", n), "libc")
  end
  lu.assertEquals(avxbuf.configure { kernel = "auto" }.kernel, "auto")
  lu.assertNotEquals(avxbuf.kernel("copy", 100), "libc")
end

function TestKnobs.test_other_architectures_use_the_c_library()
  if h.X86 then lu.skip("x86: see the kernel tests") end
  lu.assertEquals(cpu.max_use_avx, 0)
  lu.assertEquals(h.use { use_avx = 3, max_vector_size = 64 }.use_avx, 0)
  for _, op in ipairs { "copy", "zero", "fill" } do
    for _, n in ipairs { 0, 100, 2 ^ 30 } do lu.assertEquals(avxbuf.kernel(op, n), "libc") end
  end
  -- another processor, or an i386 build without SSE2 (Debian's baseline)
  lu.assertNotNil(cpu.reason:find("not an x86 processor", 1, true) or cpu.reason:find("without SSE2", 1, true),
                  cpu.reason)
  lu.assertStrContains(cpu.reason, cpu.arch)
end

function TestKnobs.test_settings_accumulate_until_reset()
  avxbuf.configure { use_avx = 0 }
  local c = avxbuf.configure { vector_zeroing = false }
  lu.assertEquals(c.use_avx, 0)
  lu.assertFalse(c.vector_zeroing)
  c = avxbuf.reset()
  lu.assertEquals(c.use_avx, cpu.default.use_avx)
end

TestOptionsEnv = {}
TestOptionsEnv.setUp = h.needs_children

-- The child prints its settings and, last, its own CPU's defaults (under
-- valgrind the parent's emulated CPU is not the child's).
local PRINT_CONFIG = [[
local a = require("avxbuf")
local c, d = a.config(), a.cpu().default
print(c.use_avx, c.max_vector_size, c.vector_zeroing, c.kernel, c.nontemporal_threshold)
print(d.use_avx, d.vector_zeroing, d.nontemporal_threshold)]]

function TestOptionsEnv.test_good_options_apply()
  local out, status = h.run_child({ AVXBUF_OPTIONS = "use_avx=0,vector_zeroing=false,nontemporal_threshold=123" },
                                  PRINT_CONFIG)
  lu.assertEquals(status, 0)
  lu.assertEquals(out:match("^[^\n]*"), "0\t16\tfalse\tauto\t123")
end

function TestOptionsEnv.test_bad_entries_warn_and_are_ignored()
  local out, status = h.run_child(
    { AVXBUF_OPTIONS = "use_avx=9,bogus=1,,noequals,max_vector_size=16,kernel=libc,"
                       .. "nontemporal_threshold=99999999999999999999,vector_zeroing=maybe,use_avx=-1" },
    PRINT_CONFIG)
  lu.assertEquals(status, 0)
  for _, entry in ipairs { "use_avx=9", "bogus=1", "noequals", "nontemporal_threshold=9999",
                           "vector_zeroing=maybe", "use_avx=-1" } do
    lu.assertStrContains(out, "avxbuf: AVXBUF_OPTIONS: ignoring '" .. entry)
  end
  local got, use_avx, zeroing, nt = out:match("([^\n]*)\n(%d+)\t(%a+)\t(%d+)\n$")
  lu.assertEquals(got, string.format("%s\t16\t%s\tlibc\t%s", use_avx, zeroing, nt))
end

function TestOptionsEnv.test_reset_returns_to_the_settings_of_load_time()
  local out = h.run_child({ AVXBUF_OPTIONS = "kernel=libc" }, [[
    local a = require 'avxbuf'
    print(a.configure{ kernel = 'auto', use_avx = 0 }.kernel, a.reset().kernel,
          a.config().use_avx == a.cpu().default.use_avx)]])
  lu.assertEquals(out, "auto\tlibc\ttrue\n")
end

TestStates = {}
TestStates.setUp = h.needs_children

function TestStates.test_two_states_do_not_share_settings()
  local dir = package.cpath:match("^([^;]*)/%?%.so")
  local bin = dir:gsub("/emul$", "") .. "/two_states"   -- built once per Lua version
  local p = io.popen(string.format("%q %q 2>&1", bin, dir))
  local out = p:read("*a")
  p:close()
  lu.assertEquals(out, "ok\n")
end
