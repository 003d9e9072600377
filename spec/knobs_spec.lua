-- Knob semantics, seen through avxbuf.kernel(); clamping to what the CPU
-- (or the emulated build) can run; AVXBUF_OPTIONS; per-state settings.
local lu = require "luaunit"
local h = require "helpers"
local avxbuf = h.avxbuf

local cpu = avxbuf.cpu()
local max_level = avxbuf.emulated and 3 or cpu.max_use_avx
local erms = cpu.features.erms
-- The width each use_avx level runs at: the policy's where the level is
-- the policy's (a processor's row may narrow it: Zen 4's 32 bytes at
-- AVX-512), its registers' full width otherwise.
local FULL = { [0] = 16, 32, 32, 64 }
local function width(level) return level == cpu.default.use_avx and cpu.default.max_vector_size or FULL[level] end
local function family(level) return h.family(level, width(level)) end
local movsb, stosb = h.string_kernel("copy"), h.string_kernel("fill")

TestKnobs = {}
TestKnobs.tearDown = avxbuf.reset

function TestKnobs.test_defaults_come_from_the_policy()
  local now = avxbuf.cpu()   -- (not the file's: a fill the suite made may have measured what the policy asks)
  local c = avxbuf.reset()
  lu.assertEquals(c, avxbuf.config())
  lu.assertEquals(c.use_avx, now.default.use_avx)
  lu.assertEquals(c.vector_zeroing, now.default.vector_zeroing)
  lu.assertEquals(c.avx3_threshold, now.default.avx3_threshold)
  lu.assertEquals(c.nontemporal_threshold, now.default.nontemporal_threshold)
  lu.assertEquals(c.rep_movsb_threshold, erms and now.default.rep_movsb_threshold or 0)
  lu.assertEquals(c.rep_movsb_stop_threshold, erms and now.default.rep_movsb_stop_threshold or 0)
  lu.assertEquals(c.rep_stosb_threshold, erms and now.default.rep_stosb_threshold or 0)
  lu.assertEquals(c.rep_stosb_stop_threshold, erms and now.default.rep_stosb_stop_threshold or 0)
  lu.assertEquals(c.kernel, "auto")
  lu.assertEquals(c.max_vector_size, now.default.max_vector_size)
  lu.assertTrue(c.max_vector_size <= FULL[c.use_avx])
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
    lu.assertEquals(c.max_vector_size, width(3))
    c = h.use { use_avx = 3, max_vector_size = 64, rep_movsb_threshold = 0, nontemporal_threshold = 0 }
    lu.assertEquals(c.max_vector_size, 64)
    lu.assertEquals(avxbuf.kernel("copy", 100000), h.family(3, 64))
  end
end

function TestKnobs.test_avx3_threshold()
  h.needs_x86()
  if max_level < 3 then
    lu.assertEquals(h.use { use_avx = 3 }.use_avx, max_level)
    return
  end
  h.use { use_avx = 3, max_vector_size = 64, avx3_threshold = 4096, rep_movsb_threshold = 0, rep_stosb_threshold = 0 }
  lu.assertEquals(avxbuf.kernel("copy", 4095), h.family(3, 32))
  lu.assertEquals(avxbuf.kernel("copy", 4096), h.family(3, 64))
  lu.assertEquals(avxbuf.kernel("fill", 4095), h.family(3, 32))
  lu.assertEquals(avxbuf.kernel("fill", 4096), h.family(3, 64))
  h.use { use_avx = 3, max_vector_size = 64, avx3_threshold = 0 }
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
  -- fills stream from the policy's multiple of it: twice, or 4 times where the L3 leaf was capped
  local fills_from = 5000 * avxbuf.cpu().default.fill_nontemporal_factor
  lu.assertEquals(avxbuf.cpu().default.fill_nontemporal_factor, avxbuf.cpu().cache.l3_capped and 4 or 2)
  lu.assertEquals(avxbuf.kernel("fill", fills_from - 1), stosb, "fills stream from the policy's multiple")
  lu.assertEquals(avxbuf.kernel("fill", fills_from), xmm_nt)
  lu.assertEquals(c.memset_nontemporal_threshold, fills_from, "unless told, that multiple of nontemporal_threshold")
  -- told (glibc 2.40's x86_memset_non_temporal_threshold): fills stream
  -- from there, copies as before; 0 never
  c = h.use { use_avx = 0, rep_stosb_threshold = 3000, nontemporal_threshold = 5000,
              memset_nontemporal_threshold = 7000 }
  lu.assertEquals(c.memset_nontemporal_threshold, 7000)
  lu.assertEquals(avxbuf.kernel("fill", 6999), stosb)
  lu.assertEquals(avxbuf.kernel("zero", 7000), xmm_nt)
  lu.assertEquals(avxbuf.kernel("copy", 5000), xmm_nt)
  h.use { use_avx = 0, rep_movsb_threshold = 0, rep_stosb_threshold = 0, nontemporal_threshold = 5000,
          memset_nontemporal_threshold = 0 }
  lu.assertEquals(avxbuf.kernel("zero", 2 ^ 40), xmm, "0 means never")
  lu.assertEquals(avxbuf.kernel("copy", 2 ^ 40), xmm_nt)
  if math.type then   -- (2^62 is an integer argument from Lua 5.3 on)
    c = h.use { use_avx = 0, nontemporal_threshold = math.tointeger(2 ^ 62) }
    lu.assertEquals(c.memset_nontemporal_threshold, 0, "a multiple of a threshold past 2^60 is never")
  end
  h.use { use_avx = 0, rep_movsb_threshold = 0, rep_stosb_threshold = 0, nontemporal_threshold = 0 }
  lu.assertEquals(avxbuf.kernel("copy", 2 ^ 40), xmm, "0 means never")
  lu.assertEquals(avxbuf.kernel("fill", 2 ^ 40), xmm)
  lu.assertEquals(avxbuf.kernel("zero", 2 ^ 40), xmm)
  -- a window with an end, as glibc's rep_movsb_stop_threshold
  h.use { use_avx = 0, rep_movsb_threshold = 1000, rep_movsb_stop_threshold = 3000, nontemporal_threshold = 5000 }
  lu.assertEquals(avxbuf.kernel("copy", 1000), xmm)
  lu.assertEquals(avxbuf.kernel("copy", 1001), movsb)
  lu.assertEquals(avxbuf.kernel("copy", 2999), movsb)
  lu.assertEquals(avxbuf.kernel("copy", 3000), xmm)
  -- and rep stosb's, for zero and fill alike
  h.use { use_avx = 0, rep_stosb_threshold = 1000, rep_stosb_stop_threshold = 3000, nontemporal_threshold = 5000 }
  for _, op in ipairs { "zero", "fill" } do
    lu.assertEquals({ avxbuf.kernel(op, 1000), avxbuf.kernel(op, 1001), avxbuf.kernel(op, 2999),
                      avxbuf.kernel(op, 3000) }, { xmm, stosb, stosb, xmm }, op)
  end
  for _, n in ipairs { 1000, 1001, 2999, 3000 } do
    local b = avxbuf.from(h.pattern(n + 130, 4))
    b:fill(0xA5, 65, n)
    local want = h.pattern(n + 130, 4)
    h.assert_bytes(b:tostring(), want:sub(1, 64) .. string.char(0xA5):rep(n) .. want:sub(65 + n), "fill of " .. n)
  end
  lu.assertEquals(avxbuf.kernel("copy", 5000), xmm_nt)
  local d, s = avxbuf.new(4000), avxbuf.from(h.pattern(4000, 8))
  for _, n in ipairs { 999, 1000, 2999, 3000, 3999 } do
    d:zero()
    avxbuf.copy(d, 1, s, 1, n)
    h.assert_bytes(d:tostring(), s:tostring(1, n) .. ("\0"):rep(4000 - n), "copy of " .. n)
  end
end

-- Zero streams from a threshold of its own: unless told, twice the copies'
-- (fills' too, unless the policy moved theirs), fills' where that was told
-- (glibc's memset threshold serves both), or, where the policy says so
-- (AMD) and fills' was not told, copies'.
function TestKnobs.test_zero_nontemporal_threshold()
  h.needs_x86()
  local xmm, xmm_nt = h.family(0, 16), h.family(0, 16, "streaming")
  local default = avxbuf.cpu().default
  local as_copies = default.zero_streams_as_copies
  lu.assertEquals(as_copies, cpu.vendor == "AuthenticAMD" and default.rep_stosb_beyond_l2 ~= "as fast",
                  "the policy's rule: AMD, unless rep stosb keeps the cache past the L2")
  local fills_from = 5000 * default.fill_nontemporal_factor
  local c = h.use { use_avx = 0, rep_stosb_threshold = 0, nontemporal_threshold = 5000 }
  lu.assertEquals(c.zero_nontemporal_threshold, as_copies and 5000 or 10000)
  lu.assertEquals(avxbuf.kernel("zero", c.zero_nontemporal_threshold - 1), xmm)
  lu.assertEquals(avxbuf.kernel("zero", c.zero_nontemporal_threshold), xmm_nt)
  lu.assertEquals(avxbuf.kernel("fill", fills_from - 1), xmm, "fills keep the policy's multiple of the copies'")
  lu.assertEquals(avxbuf.kernel("fill", fills_from), xmm_nt)
  -- fills' threshold told: zero follows it
  c = h.use { use_avx = 0, rep_stosb_threshold = 0, nontemporal_threshold = 5000, memset_nontemporal_threshold = 0 }
  lu.assertEquals(c.zero_nontemporal_threshold, 0)
  lu.assertEquals(avxbuf.kernel("zero", 2 ^ 40), xmm)
  -- told: zero alone moves, in either direction, 0 never
  for _, t in ipairs { 3000, 20000, 0 } do
    c = h.use { use_avx = 0, rep_stosb_threshold = 0, nontemporal_threshold = 5000, zero_nontemporal_threshold = t }
    lu.assertEquals({ c.zero_nontemporal_threshold, c.memset_nontemporal_threshold }, { t, fills_from })
    if t > 0 then
      lu.assertEquals({ avxbuf.kernel("zero", t - 1), avxbuf.kernel("zero", t) }, { xmm, xmm_nt })
    else
      lu.assertEquals(avxbuf.kernel("zero", 2 ^ 40), xmm)
    end
    lu.assertEquals({ avxbuf.kernel("fill", fills_from - 1), avxbuf.kernel("fill", fills_from) }, { xmm, xmm_nt })
    -- and the bytes: a zero either side of it, guards intact
    local n0 = t > 0 and t or 4096
    for n = n0 - 1, n0 + 1 do
      local b = avxbuf.from(h.pattern(n + 130, 3))
      b:zero(65, n)
      local want = h.pattern(n + 130, 3)
      h.assert_bytes(b:tostring(), want:sub(1, 64) .. ("\0"):rep(n) .. want:sub(65 + n), "zero of " .. n)
    end
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

-- cpu().reason is the policy's until a knob in force differs from the
-- default; then it names each such knob with the default's value, and
-- cpu().overrides holds them (cpu().default.reason stays the policy's).
function TestKnobs.test_the_reason_says_which_knobs_override_the_default()
  local base = avxbuf.reset()
  local c = avxbuf.cpu()
  if os.getenv("AVXBUF_OPTIONS") == nil then
    lu.assertEquals(c.overrides, {})
    lu.assertEquals(c.reason, c.default.reason)
  end
  h.use { kernel = "libc", vector_zeroing = not base.vector_zeroing }
  c = avxbuf.cpu()
  lu.assertEquals(c.overrides, { kernel = "libc", vector_zeroing = not base.vector_zeroing })
  lu.assertEquals(c.reason, string.format("%s; overridden by the knobs in force: vector_zeroing=%s (default %s), "
                                          .. "kernel=libc (default auto)", c.default.reason,
                                          tostring(not base.vector_zeroing), tostring(base.vector_zeroing)))
  -- a request equal to the default overrides nothing; a lower level does
  h.use { use_avx = base.use_avx, kernel = "auto" }
  lu.assertEquals(avxbuf.cpu().overrides, {})
  if base.use_avx > 0 then
    h.use { use_avx = 0 }
    c = avxbuf.cpu()
    lu.assertEquals(c.overrides.use_avx, 0)
    lu.assertStrContains(c.reason, "; overridden by the knobs in force: use_avx=0 (default " .. base.use_avx .. ")")
  end
  avxbuf.reset()
  if os.getenv("AVXBUF_OPTIONS") == nil then lu.assertEquals(avxbuf.cpu().reason, avxbuf.cpu().default.reason) end
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

-- ---- one rule for configure{} and AVXBUF_OPTIONS ----------------------------

-- Runs one child per AVXBUF_OPTIONS text (one shell for them all): for
-- each, its warnings (the entry and the reason) and its settings as text.
local SETTINGS_LINE = [[
local t = {}
for k, v in pairs(require('avxbuf').config()) do
  t[#t + 1] = k .. '=' .. (type(v) == 'number' and string.format('%.0f', v) or tostring(v))
end
table.sort(t)
print('settings ' .. table.concat(t, ' '))]]

local function through_env(texts)
  local cmd = { "LUA_CPATH=" .. h.sh(package.cpath:match("^[^;]*") .. ";;") .. "; export LUA_CPATH" }
  for i, text in ipairs(texts) do
    cmd[#cmd + 1] = string.format("echo '@@ %d'; AVXBUF_OPTIONS=%s %s -e %s", i, h.sh(text),
                                  h.sh(arg[-1] or "lua5.4"), h.sh(SETTINGS_LINE))
  end
  local out, status = h.shell("{ " .. table.concat(cmd, "; ") .. "; }")
  lu.assertEquals(status, 0, out)
  local runs = {}
  for i, chunk in (out .. "@@ "):gmatch("@@ (%d+)\n(.-)%f[@]") do
    local run = { warnings = {}, settings = {} }
    for entry, why in chunk:gmatch("avxbuf: AVXBUF_OPTIONS: ignoring '(.-)': ([^\n]*)") do
      run.warnings[#run.warnings + 1] = { entry = entry, why = why }
    end
    for k, v in (chunk:match("settings ([^\n]*)") or ""):gmatch("([%w_]+)=(%S+)") do run.settings[k] = v end
    runs[tonumber(i)] = run
  end
  lu.assertEquals(#runs, #texts, out)
  return runs
end

-- A value as the variable spells it, and a setting as the child prints it.
local function text_of(v)
  return type(v) == "number" and v == math.floor(v) and string.format("%.0f", v) or tostring(v)
end

-- Each knob's values: accepted (no reason) or refused, with the reason
-- both paths must give. The variable gets each as text_of spells it.
local BYTES = "must be a byte count from 0 to 2^62"
local VALUE_CASES = {
  { "use_avx", 0 }, { "use_avx", 2 }, { "use_avx", 3 },
  { "use_avx", 4, "must be 0, 1, 2 or 3" }, { "use_avx", -1, "must be 0, 1, 2 or 3" },
  { "use_avx", 1.5, "must be an integer" }, { "use_avx", true, "must be an integer" },
  { "use_avx", "two", "must be an integer" },
  { "max_vector_size", 16 }, { "max_vector_size", 32 }, { "max_vector_size", 64 },
  { "max_vector_size", 48, "must be 16, 32 or 64" }, { "max_vector_size", 0, "must be 16, 32 or 64" },
  { "max_vector_size", false, "must be an integer" },
  { "vector_zeroing", true }, { "vector_zeroing", false },
  { "vector_zeroing", 0, "must be true or false" }, { "vector_zeroing", 1, "must be true or false" },
  { "vector_zeroing", "yes", "must be true or false" }, { "vector_zeroing", "TRUE", "must be true or false" },
  { "kernel", "auto" }, { "kernel", "libc" },
  { "kernel", "LIBC", 'must be "auto" or "libc"' }, { "kernel", 1, 'must be "auto" or "libc"' },
  { "kernel", true, 'must be "auto" or "libc"' },
}
for _, knob in ipairs { "avx3_threshold", "rep_movsb_threshold", "rep_movsb_stop_threshold", "rep_stosb_threshold",
                        "rep_stosb_stop_threshold", "nontemporal_threshold", "memset_nontemporal_threshold",
                        "zero_nontemporal_threshold" } do
  for _, case in ipairs { { 0 }, { 4096 }, { 2 ^ 53 }, { -1, BYTES }, { 2.5, "must be an integer" },
                          { "4k", "must be an integer" }, { false, "must be an integer" } } do
    VALUE_CASES[#VALUE_CASES + 1] = { knob, case[1], case[2] }
  end
end

function TestOptionsEnv.test_configure_and_the_variable_judge_alike()
  local texts = {}
  for i, c in ipairs(VALUE_CASES) do texts[i] = c[1] .. "=" .. text_of(c[2]) end
  local runs = through_env(texts)
  for i, c in ipairs(VALUE_CASES) do
    local knob, value, reason = c[1], c[2], c[3]
    local what = texts[i]
    avxbuf.reset()
    local ok, got = pcall(avxbuf.configure, { [knob] = value })
    local run = runs[i]
    if reason then
      lu.assertFalse(ok, "configure accepted " .. what)
      lu.assertStrContains(got, "bad argument #1 to ")
      lu.assertStrContains(got, "(knob '" .. knob .. "' " .. reason .. ")", false, what)
      lu.assertEquals(run.warnings, { { entry = what, why = reason } }, what)
    else
      lu.assertTrue(ok, what .. ": " .. tostring(got))
      lu.assertEquals(run.warnings, {}, what)
      -- (under valgrind the child's CPU, which clamps, is not the parent's)
      if not h.EMULATED_CPUID then lu.assertEquals(run.settings[knob], text_of(got[knob]), what) end
    end
  end
end

-- What both paths accept beyond the cases above: 2^62 is the largest byte
-- count (on 5.1 and LuaJIT a number that large is not an exact integer,
-- so only the variable is asked), and a saturated one is refused, not wrapped.
function TestOptionsEnv.test_the_largest_byte_count()
  local runs = through_env { "nontemporal_threshold=4611686018427387904", "nontemporal_threshold=4611686018427387905",
                             "nontemporal_threshold=99999999999999999999999999", "use_avx=-99999999999999999999999" }
  lu.assertEquals(runs[1].warnings, {})
  lu.assertEquals(runs[1].settings.nontemporal_threshold, "4611686018427387904")
  lu.assertEquals(runs[2].warnings[1].why, BYTES)
  lu.assertEquals(runs[3].warnings[1].why, BYTES)
  lu.assertEquals(runs[4].warnings[1].why, "must be 0, 1, 2 or 3")
  if math.type then   -- (integers of 64 bits)
    lu.assertEquals(h.use { nontemporal_threshold = 4611686018427387904 }.nontemporal_threshold, 4611686018427387904)
    lu.assertErrorMsgContains(BYTES, avxbuf.configure, { nontemporal_threshold = 4611686018427387905 })
  end
end

-- Entries between commas, semicolons or blanks (any mix, any number),
-- blanks around names, '=' and values.
function TestOptionsEnv.test_separators_and_blanks()
  local texts = {
    "use_avx=0,vector_zeroing=false,kernel=libc", "use_avx=0;vector_zeroing=false;kernel=libc",
    "use_avx=0 vector_zeroing=false kernel=libc", "use_avx=0\tvector_zeroing=false\nkernel=libc",
    " use_avx = 0 ; vector_zeroing\t=\tfalse , kernel =libc ",
    ",;, use_avx=0,,;; vector_zeroing=false ;\r\nkernel= libc;,",
    "use_avx =0, vector_zeroing= false; kernel\n=\nlibc",
  }
  for i, run in ipairs(through_env(texts)) do
    lu.assertEquals(run.warnings, {}, texts[i])
    lu.assertEquals({ run.settings.use_avx, run.settings.vector_zeroing, run.settings.kernel },
                    { "0", "false", "libc" }, texts[i])
  end
end

-- A bad entry is named, with the reason, and skipped; the others apply.
function TestOptionsEnv.test_a_bad_entry_is_named_and_the_others_apply()
  local cases = {
    { "use_avx=9 vector_zeroing=false", { { "use_avx=9", "must be 0, 1, 2 or 3" } } },
    { "use_avx= vector_zeroing=false", { { "use_avx=", "no value" } } },
    { "vector_zeroing=false use_avx =", { { "use_avx =", "no value" } } },
    { "bogus = 1; vector_zeroing=false", { { "bogus = 1", "unknown knob" } } },
    { "kernel libc, vector_zeroing=false", { { "kernel", "expected name=value" }, { "libc", "expected name=value" } } },
    { "=1;vector_zeroing=false", { { "=1", "no knob name" } } },
    { "use_avx==1,vector_zeroing=false", { { "use_avx==1", "must be an integer" } } },
    { "vector_zeroing=0 vector_zeroing=false", { { "vector_zeroing=0", "must be true or false" } } },
  }
  local texts = {}
  for i, c in ipairs(cases) do texts[i] = c[1] end
  for i, run in ipairs(through_env(texts)) do
    local want = {}
    for j, w in ipairs(cases[i][2]) do want[j] = { entry = w[1], why = w[2] } end
    lu.assertEquals(run.warnings, want, texts[i])
    lu.assertEquals(run.settings.vector_zeroing, "false", texts[i])
  end
end
