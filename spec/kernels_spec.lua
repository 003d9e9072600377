-- Every kernel the build can run, against a reference built from Lua string
-- operations (which never touch avxbuf's kernels): every size 0..1100,
-- misalignments 0..63 of source and destination, overlap both ways, a few
-- MiB, and 64 guard bytes either side of every destination.
local lu = require "luaunit"
local h = require "helpers"
local avxbuf = h.avxbuf

local GUARD = 64
local MAXN = 1100
-- Destination buffer: guard, 63 bytes of misalignment room, data, guard.
local DLEN = GUARD + 63 + MAXN + GUARD

local dpat = h.pattern(DLEN, 1)
local spat = h.pattern(MAXN + 64, 2)

-- Sizes where some kernel changes strategy: every size up to 16 (the
-- scalar head/tail moves of small.h and of LuaJIT's FFI path, by 1, 2, 4
-- and 8 bytes), then vector multiples +-1 up to 16 x 64.
local CLASS_SIZES = {}
for n = 0, 16 do CLASS_SIZES[n] = true end
for _, v in ipairs { 16, 32, 64 } do
  for m = 1, 16 do
    for d = -1, 1 do
      local n = v * m + d
      if n >= 0 and n <= MAXN then CLASS_SIZES[n] = true end
    end
  end
end
local class_list = {}
for n in pairs(CLASS_SIZES) do class_list[#class_list + 1] = n end
table.sort(class_list)

-- One copy from a string or buffer source into a fresh destination, checked.
local function check_copy(dst, src, sbytes, n, da, sa, what)
  dst:copy(1, dpat)
  local di = GUARD + da + 1
  avxbuf.copy(dst, di, src, sa + 1, n)
  local expected = dpat:sub(1, di - 1) .. sbytes:sub(sa + 1, sa + n) .. dpat:sub(di + n)
  h.assert_bytes(dst:tostring(), expected,
                 string.format("%s copy n=%d dst+%d src+%d", what, n, da, sa))
end

local function check_fill(dst, byte, n, da, what)
  dst:copy(1, dpat)
  local di = GUARD + da + 1
  if byte == 0 then avxbuf.zero(dst, di, n) else avxbuf.fill(dst, byte, di, n) end
  local expected = dpat:sub(1, di - 1) .. string.char(byte):rep(n) .. dpat:sub(di + n)
  h.assert_bytes(dst:tostring(), expected,
                 string.format("%s %s n=%d dst+%d", what, byte == 0 and "zero" or "fill", n, da))
end

-- Same-buffer copy from si to di (1-based, inside the data area) of a
-- buffer holding pat (dpat where none), checked.
local function check_overlap(buf, di, si, n, what, pat)
  pat = pat or dpat
  buf:copy(1, pat)
  avxbuf.copy(buf, di, buf, si, n)
  local expected = pat:sub(1, di - 1) .. pat:sub(si, si + n - 1) .. pat:sub(di + n)
  h.assert_bytes(buf:tostring(), expected,
                 string.format("%s overlapping copy n=%d from %d to %d", what, n, si, di))
end

local function kernel_suite(cfg)
  local suite = {}
  local function setup()
    h.use(cfg.knobs)
    lu.assertEquals(avxbuf.kernel("copy", 1000), cfg.copy)
    lu.assertEquals(avxbuf.kernel("zero", 1000), cfg.fill)
    lu.assertEquals(avxbuf.kernel("fill", 1000), cfg.fill)
  end
  suite.setUp = setup
  suite.tearDown = function() avxbuf.reset() end

  function suite.test_every_size()
    local dst = avxbuf.new(DLEN)
    local src = avxbuf.from(spat)
    for n = 0, MAXN, h.LIGHT and 7 or 1 do
      local da, sa = n % 64, (n * 7 + 3) % 64
      check_copy(dst, src, spat, n, da, sa, cfg.name)
      check_copy(dst, spat, spat, n, sa, da, cfg.name .. " (string source)")
      check_fill(dst, 0, n, da, cfg.name)
      check_fill(dst, 0xA5, n, sa, cfg.name)
    end
  end

  function suite.test_every_misalignment()
    local dst = avxbuf.new(DLEN)
    local src = avxbuf.from(spat)
    for _, n in ipairs(class_list) do
      for da = 0, 63, h.LIGHT and 9 or 1 do
        -- every source offset at a few sizes, a spread of them elsewhere
        local step = h.LIGHT and 17 or (n == 33 or n == 100 or n == 1000) and 1 or 13
        for sa = da % step, 63, step do check_copy(dst, src, spat, n, da, sa, cfg.name) end
        check_fill(dst, n % 255 + 1, n, da, cfg.name)
      end
    end
  end

  -- dst - src = 32 mod 64, which the 512-bit family copies with 32-byte
  -- vectors up to 8 KiB but for the forward copies up to 1 KiB whose loads
  -- its loop aligns: both sides of each bound and of the 8-vector one.
  function suite.test_skew_32_window()
    local big = 9000
    local dp, sp = h.pattern(2 * GUARD + 64 + big, 3), h.pattern(64 + big, 4)
    local dst, src = avxbuf.from(dp), avxbuf.from(sp)
    for _, n in ipairs { 257, 512, 513, 1000, 1024, 1025, 4096, 8191, 8192, 8193, big } do
      for _, o in ipairs { { 0, 32 }, { 32, 0 }, { 31, 63 }, { 63, 31 }, { 1, 33 }, { 40, 8 } } do
        local da, sa = o[1], o[2]
        dst:copy(1, dp)
        local di = GUARD + da + 1
        avxbuf.copy(dst, di, src, sa + 1, n)
        h.assert_bytes(dst:tostring(), dp:sub(1, di - 1) .. sp:sub(sa + 1, sa + n) .. dp:sub(di + n),
                       string.format("%s copy n=%d dst+%d src+%d", cfg.name, n, da, sa))
      end
    end
  end

  function suite.test_overlap_both_directions()
    local buf = avxbuf.new(DLEN)
    for _, n in ipairs(class_list) do
      for _, dist in ipairs { 1, 7, 16, 31, 32, 33, 63, 64, 65, 129, n - 1 } do
        if dist >= 1 and dist < n and GUARD + dist + n <= DLEN - GUARD then
          local lo = GUARD + (n + dist) % 64 + 1
          check_overlap(buf, lo + dist, lo, n, cfg.name)  -- forward overlap: dst after src
          check_overlap(buf, lo, lo + dist, n, cfg.name)  -- dst before src
        end
      end
      check_overlap(buf, GUARD + 1, GUARD + 1, n, cfg.name)  -- onto itself
    end
  end

  -- Past 2 KiB a vector kernel's copies enter its copy past the size tests
  -- (copy_large, src/kernels/kernels.h): overlaps both ways there too (in
  -- the streaming and rep suites the temporal family's take them).
  function suite.test_overlap_past_2_kib()
    local big = h.long_pattern(2 * GUARD + 2 * 17000, 8)
    local buf = avxbuf.new(#big)
    for _, n in ipairs { 2049, 2113, 4096, 8191, 16384 + 33 } do
      lu.assertEquals(avxbuf.kernel("copy", n), cfg.copy, "the kernel of copies of " .. n .. " bytes")
      for _, dist in ipairs { 1, 31, 32, 33, 64, 4095, 4096, n - 1 } do
        local lo = GUARD + 1 + (n + dist) % 64
        check_overlap(buf, lo + dist, lo, n, cfg.name, big)   -- dst after src
        check_overlap(buf, lo, lo + dist, n, cfg.name, big)   -- dst before src
      end
    end
  end

  -- Disjoint ranges in one buffer, dst a few bytes past src modulo a page
  -- (the 4K-aliasing case the kernels copy descending; at 32 and 96 the
  -- 512-bit family hands them to the 32-byte one), and just outside it.
  function suite.test_page_aliasing_distances()
    local span = 3 * 4096
    local big = h.long_pattern(2 * GUARD + 2 * span + 5000, 7)
    for _, n in ipairs { 513, 1024, 3000, 5000 } do
      for _, dist in ipairs { 0, 1, 31, 32, 63, 64, 96, 255, 256, 4095 } do
        local buf = avxbuf.from(big)
        local si = GUARD + 1 + (n % 64)
        local di = si + span + dist
        avxbuf.copy(buf, di, buf, si, n)
        h.assert_bytes(buf:tostring(), big:sub(1, di - 1) .. big:sub(si, si + n - 1) .. big:sub(di + n),
                       string.format("%s copy n=%d, dst - src = %d mod 4096", cfg.name, n, dist))
        buf = avxbuf.from(big)
        avxbuf.copy(buf, si, buf, di, n)   -- and src past dst by as much
        h.assert_bytes(buf:tostring(), big:sub(1, si - 1) .. big:sub(di, di + n - 1) .. big:sub(si + n),
                       string.format("%s copy n=%d, src - dst = %d mod 4096", cfg.name, n, dist))
      end
    end
  end

  -- Copies of 513 B-1 KiB that a forward loop may not take: dst after src
  -- and overlapping it, or a few bytes past it modulo a page, which the
  -- 512-bit family makes with every byte loaded before the first store (but
  -- at skew 32); at destinations on and off a line, both ways, every byte
  -- of the buffer checked, the guards included.
  function suite.test_overlapping_and_aliasing_to_16_vectors()
    local span = 2 * 4096
    local big = h.long_pattern(2 * GUARD + 2 * span + 2048, 9)
    local buf = avxbuf.new(#big)
    -- the 1-based index of the first byte on a line at or after GUARD + 1
    local at = GUARD + 1 + (64 - (h.address(buf) + GUARD) % 64) % 64
    for _, n in ipairs { 513, 575, 576, 577, 1000, 1023, 1024 } do
      for _, da in ipairs { 0, 1, 31, 32, 63 } do
        for _, dist in ipairs { 1, 31, 32, 33, 64, 511, n - 1, span, span + 1, span + 32, span + 63, span + 255 } do
          check_overlap(buf, at + span + 256 + da, at + span + 256 + da - dist, n, cfg.name, big)   -- dst after src
          check_overlap(buf, at + da, at + da + dist, n, cfg.name, big)   -- dst before src
        end
      end
    end
  end

  function suite.test_few_mib()
    local n = 3 * 1024 * 1024 + 17
    local big = h.long_pattern(n + 2 * GUARD + 8192, 3)
    local src = h.long_pattern(n + 64, 4)
    local dst = avxbuf.from(big)
    avxbuf.copy(dst, GUARD + 6, src, 4, n)
    h.assert_bytes(dst:tostring(), big:sub(1, GUARD + 5) .. src:sub(4, n + 3) .. big:sub(GUARD + 6 + n),
                   cfg.name .. " 3 MiB copy")
    dst = avxbuf.from(big)
    avxbuf.fill(dst, 0x5A, GUARD + 3, n)
    h.assert_bytes(dst:tostring(), big:sub(1, GUARD + 2) .. string.char(0x5A):rep(n) .. big:sub(GUARD + 3 + n),
                   cfg.name .. " 3 MiB fill")
    for _, shift in ipairs { 1, 4097, -1, -4097 } do
      dst = avxbuf.from(big)
      local si = GUARD + 4160
      avxbuf.copy(dst, si + shift, dst, si, n)
      h.assert_bytes(dst:tostring(),
                     big:sub(1, si + shift - 1) .. big:sub(si, si + n - 1) .. big:sub(si + shift + n),
                     string.format("%s 3 MiB overlapping copy by %d", cfg.name, shift))
    end
  end
  return suite
end

for _, cfg in ipairs(h.kernel_configs()) do
  _G["TestKernel_" .. cfg.name] = kernel_suite(cfg)
end

-- The default configuration, at sizes either side of each of its thresholds.
TestDefaultThresholds = {}
function TestDefaultThresholds.test_around_every_threshold()
  avxbuf.reset()
  local cfg = avxbuf.config()
  local points = {}
  for _, knob in ipairs { "avx3_threshold", "rep_movsb_threshold", "rep_movsb_stop_threshold", "rep_stosb_threshold",
                          "rep_stosb_stop_threshold",
                          "nontemporal_threshold", "memset_nontemporal_threshold", "zero_nontemporal_threshold" } do
    points[#points + 1] = { knob, cfg[knob] }
  end
  local checked = 0
  for _, p in ipairs(points) do
    local what, t = p[1], p[2]
    if t > 0 and t <= 64 * 1024 * 1024 then
      local big = h.long_pattern(t + 256, 5)
      local src = h.long_pattern(t + 64, 6)
      for n = t - 1, t + 1 do
        local dst = avxbuf.from(big)
        avxbuf.copy(dst, 65, src, 2, n)
        h.assert_bytes(dst:tostring(), big:sub(1, 64) .. src:sub(2, n + 1) .. big:sub(65 + n),
                       string.format("default copy n=%d (%s=%d, kernel %s)", n, what, t,
                                     avxbuf.kernel("copy", n)))
        avxbuf.fill(dst, 0xC3, 66, n)
        h.assert_bytes(dst:tostring(), big:sub(1, 64) .. src:sub(2, 2) .. string.char(0xC3):rep(n) .. big:sub(66 + n),
                       string.format("default fill n=%d (%s=%d, kernel %s)", n, what, t,
                                     avxbuf.kernel("fill", n)))
        avxbuf.zero(dst, 67, n)
        h.assert_bytes(dst:tostring(), big:sub(1, 64) .. src:sub(2, 2) .. string.char(0xC3) .. ("\0"):rep(n)
                                       .. big:sub(67 + n),
                       string.format("default zero n=%d (%s=%d, kernel %s)", n, what, t,
                                     avxbuf.kernel("zero", n)))
        checked = checked + 1
      end
    end
  end
  lu.assertTrue(checked > 0)
end
