-- Bad input: every case raises "bad argument #k to 'name' (...)" naming the
-- right argument, before a single byte is written.
local lu = require "luaunit"
local h = require "helpers"
local avxbuf = h.avxbuf

local NAN, INF = 0 / 0, math.huge
local MIN, MAX = h.MININT, h.MAXINT
local NOT_INTEGERS = { true, 1.5, NAN, INF, -INF, "x", {} }

local dst_bytes = h.pattern(16, 9)
local dst, other

-- Calls f with args (nil holes allowed) through a Lua call site, so that the
-- error names the function as a user sees it; expects bad argument #k. The
-- wrappers below avoid tail calls, after which LuaJIT no longer knows the name.
local function expect(k, name, f, args, n)
  local before, before_other = dst:tostring(), other:tostring()
  local ok, err = pcall(f, h.unpack(args, 1, n))
  lu.assertFalse(ok, string.format("%s accepted %s", name, tostring(args[k])))
  lu.assertStrContains(err, string.format("bad argument #%d to '%s' (", k, name))
  h.assert_bytes(dst:tostring(), before, name .. " wrote before failing")
  h.assert_bytes(other:tostring(), before_other, name .. " wrote before failing")
end

-- Runs expect() once per bad value in `values` at argument position k.
local function matrix(name, f, base, k, values, shown_k)
  for _, v in ipairs(values) do
    local args = { h.unpack(base, 1, 5) }
    args[k] = v
    expect(shown_k or k, name, f, args, math.max(#base, k))
  end
end

local function copy(...) return (avxbuf.copy(...)) end
local function zero(...) return (avxbuf.zero(...)) end
local function fill(...) return (avxbuf.fill(...)) end
local function new(...) return (avxbuf.new(...)) end
local function from(...) return (avxbuf.from(...)) end
local function kernel(...) return (avxbuf.kernel(...)) end
local function configure(...) return (avxbuf.configure(...)) end
local function decide(...) return (avxbuf.decide(...)) end
local function method_copy(b, ...) return (b:copy(...)) end
local function method_tostring(b, ...) return (b:tostring(...)) end
local function method_byte(b, ...) return (b:byte(...)) end
local function method_find(b, ...) return (b:find(...)) end
local function method_match(b, ...) return (b:match(...)) end
local function method_gmatch(b, ...) return (b:gmatch(...)) end
local function method_rfind(b, ...) return (b:rfind(...)) end
local function method_pack(b, ...) return (b:pack(...)) end
local function method_unpack(b, ...) return (b:unpack(...)) end
local function method_hex(b, ...) return (b:hex(...)) end
local function method_put(b, ...) return (b:put(...)) end
local function method_resize(b, ...) return (b:resize(...)) end
local function method_write(b, ...) return (b:write(...)) end
local function method_read(b, ...) return (b:read(...)) end
local function method_putf(b, ...) return (b:putf(...)) end
local function method_reserve(b, ...) return (b:reserve(...)) end
local function method_split(b, ...) return (b:split(...)) end
local function method_lines(b, ...) return (b:lines(...)) end
local function compare(...) return (avxbuf.compare(...)) end

local function join(a, b)
  local t = {}
  for _, v in ipairs(a) do t[#t + 1] = v end
  for _, v in ipairs(b) do t[#t + 1] = v end
  return t
end

TestBadInput = {}

function TestBadInput.setUp()
  avxbuf.reset()
  dst = avxbuf.from(dst_bytes)
  other = avxbuf.from("abcd")
end

function TestBadInput.test_copy()
  local base = { dst, 1, other, 1, 4 }
  matrix("copy", copy, base, 1, { "a string", 5, true, {}, io.stdout })
  matrix("copy", copy, base, 2, join(NOT_INTEGERS, { 0, -1, 18, MIN, MAX }))
  matrix("copy", copy, base, 3, { 5, true, {}, io.stdout })
  matrix("copy", copy, base, 4, join(NOT_INTEGERS, { 0, -1, 6, MIN, MAX }))
  matrix("copy", copy, base, 5, join(NOT_INTEGERS, { -1, 5, MIN, MAX }))
  matrix("copy", copy, { dst, 14, other, 1, 4 }, 5, { 4 })            -- does not fit at 14
  matrix("copy", copy, { dst, 1, dst_bytes .. "x" }, 3, { dst_bytes .. "x" })  -- default n too long
  matrix("copy", copy, { dst, MAX, other, 1, 0 }, 2, { MAX - 1 })
  matrix("copy", method_copy, { dst, 1, other, 1, 4 }, 2, { 0, MAX, 1.5 }, 1)  -- method: #1 is di
  for _, n in ipairs { MAX, MAX - 2, 2 ^ 62 } do   -- offset + length overflow
    expect(5, "copy", copy, { dst, 2, other, 2, n }, 5)
  end
end

function TestBadInput.test_zero_and_fill()
  matrix("zero", zero, { dst, 1, 16 }, 1, { "s", 1, true, {} })
  matrix("zero", zero, { dst, 1, 16 }, 2, join(NOT_INTEGERS, { 0, -1, 18, MIN, MAX }))
  matrix("zero", zero, { dst, 1, 16 }, 3, join(NOT_INTEGERS, { -1, 17, MIN, MAX }))
  matrix("zero", zero, { dst, 5, 12 }, 3, { 13 })
  matrix("fill", fill, { dst, 1, 1, 16 }, 1, { "s", 1, true })
  matrix("fill", fill, { dst, 1, 1, 16 }, 2, join(NOT_INTEGERS, { -1, 256, MIN, MAX }))
  expect(2, "fill", fill, { dst }, 1)                                   -- byte is required
  matrix("fill", fill, { dst, 1, 1, 16 }, 3, join(NOT_INTEGERS, { 0, -1, 18, MIN, MAX }))
  matrix("fill", fill, { dst, 1, 1, 16 }, 4, join(NOT_INTEGERS, { -1, 17, MIN, MAX }))
end

function TestBadInput.test_constructors_and_reads()
  matrix("new", new, { 4, 0 }, 1, join(NOT_INTEGERS, { -1, MIN, MAX }))
  matrix("new", new, { 4, 0 }, 2, { true, -1, 256, 1.5, NAN, "x" })
  matrix("from", from, { "abc", 1, 2 }, 1, { 5, true, {} })
  matrix("from", from, { "abc", 1, 2 }, 2, NOT_INTEGERS)
  matrix("from", from, { "abc", 1, 2 }, 3, NOT_INTEGERS)
  matrix("tostring", method_tostring, { dst, 1, 2 }, 2, NOT_INTEGERS, 1)
  matrix("tostring", method_tostring, { dst, 1, 2 }, 3, NOT_INTEGERS, 2)
  matrix("byte", method_byte, { dst, 1, 2 }, 2, NOT_INTEGERS, 1)
  matrix("kernel", kernel, { "copy", 1 }, 1, { "move", 1, true })
  matrix("kernel", kernel, { "copy", 1 }, 2, join(NOT_INTEGERS, { -1, MIN }))
end

-- Whole numbers past every integer: LuaJIT's path took 2^63 as an index,
-- converted it to a negative int64_t, found it "within" the length and
-- read a wild address (../shared/repro/jit_byte_huge_index.lua). Each
-- raises as any other number without an integer representation does,
-- interpreted and compiled (the loop makes the call site hot).
function TestBadInput.test_reads_at_numbers_past_the_integers()
  local BEYOND = { 2 ^ 63, 2 ^ 64, -2 ^ 64, 1e300 }
  h.each_jit_mode(function()
    for _ = 1, 60 do
      matrix("tostring", method_tostring, { dst, 1, 2 }, 2, BEYOND, 1)
      matrix("tostring", method_tostring, { dst, 1, 2 }, 3, BEYOND, 2)
      for _, v in ipairs(BEYOND) do expect(1, "tostring", method_tostring, { dst, v, v }, 3) end
      matrix("byte", method_byte, { dst, 1 }, 2, BEYOND, 1)
      matrix("unpack", method_unpack, { dst, 1, "B" }, 2, BEYOND, 1)
      matrix("pack", method_pack, { dst, 1, "B", 7 }, 2, BEYOND, 1)
    end
  end)
end

-- The methods of growth, typed access, search and I/O: argument numbers as
-- a method call shows them (the buffer is the "self" before #1).
function TestBadInput.test_growth_access_search_and_io()
  local NOT_BYTES = { 5, true, {}, print }
  matrix("put", method_put, { dst, "x", "y" }, 3, { true, {}, print, io.stdout }, 2)   -- (numbers: as tostring)
  matrix("resize", method_resize, { dst, 4 }, 2, join(NOT_INTEGERS, { -1, MIN, MAX }), 1)
  matrix("find", method_find, { dst, "x", 1 }, 2, NOT_BYTES, 1)
  matrix("find", method_find, { dst, "x", 1 }, 3, NOT_INTEGERS, 2)
  -- a pattern (a magic byte, not plain) is a string, never a buffer
  matrix("find", method_find, { dst, "%a", 1, false }, 2, { 5, true, {}, avxbuf.from("%a") }, 1)
  matrix("find", method_find, { dst, "%a", 1, false }, 3, NOT_INTEGERS, 2)
  matrix("match", method_match, { dst, "%a", 1 }, 2, { 5, true, {}, print, avxbuf.from("a") }, 1)
  matrix("match", method_match, { dst, "%a", 1 }, 3, NOT_INTEGERS, 2)
  matrix("gmatch", method_gmatch, { dst, "%a", 1 }, 2, { 5, true, {}, print, avxbuf.from("a") }, 1)
  matrix("gmatch", method_gmatch, { dst, "%a", 1 }, 3, NOT_INTEGERS, 2)
  matrix("rfind", method_rfind, { dst, "x", 1 }, 2, NOT_BYTES, 1)
  matrix("rfind", method_rfind, { dst, "x", 1 }, 3, NOT_INTEGERS, 2)
  -- (a string before the format is the format: appended)
  matrix("pack", method_pack, { dst, 1, "b", 1 }, 2, { true, 1.5, NAN, INF, -INF, {}, 0, -1, 18, MIN, MAX }, 1)
  matrix("pack", method_pack, { dst, 1, "b", 1 }, 3, { true, {}, "q", "i0", "c", "!3i3" }, 2)
  matrix("pack", method_pack, { dst, 1, "b", 1 }, 4, { "x", true, {}, 1.5, 128, -129 }, 3)
  matrix("pack", method_pack, { dst, "b", 1 }, 2, { "q", "i0", "c", "!3i3", "X" }, 1)           -- appended
  matrix("pack", method_pack, { dst, "b", 1 }, 3, { "x", true, {}, 1.5, 128, -129 }, 2)
  matrix("pack", method_pack, { dst, "c17 b", "", 1 }, 4, { 128, true }, 3)                  -- would grow
  matrix("pack", method_pack, { dst, 17, "c9 b", "", 1 }, 5, { 128, "x" }, 4)               -- at #buf + 1
  matrix("unpack", method_unpack, { dst, 1, "b" }, 2, join(NOT_INTEGERS, { 18, MAX }), 1)
  matrix("unpack", method_unpack, { dst, 1, "b" }, 3, { true, {}, "q", "i17" }, 2)
  matrix("unpack", method_unpack, { dst, 10, "j" }, 2, { 10, 16, -1 }, 1)          -- too short
  matrix("hex", method_hex, { dst, 1, 2 }, 2, NOT_INTEGERS, 1)
  matrix("hex", method_hex, { dst, 1, 2 }, 3, NOT_INTEGERS, 2)
  matrix("compare", compare, { "a", "b" }, 1, NOT_BYTES)
  matrix("compare", compare, { "a", "b" }, 2, NOT_BYTES)
  matrix("write", method_write, { dst, io.stdout }, 2, { 5, "x", {}, true }, 1)
  matrix("write", method_write, { dst, io.stdout, 1, 2 }, 3, NOT_INTEGERS, 2)
  matrix("read", method_read, { dst, io.stdin, 1 }, 2, { 5, "x", {}, true }, 1)
  matrix("read", method_read, { dst, io.stdin, 1 }, 3, join(NOT_INTEGERS, { -1, MIN, MAX }), 2)
  local file = io.tmpfile()   -- (bytes to read, should a check be missing: dst would change)
  file:write("file bytes")
  file:seek("set")
  matrix("read", method_read, { dst, file, 1, 1 }, 4, join(NOT_INTEGERS, { 0, -1, 18, MIN, MAX }), 3)
  file:close()
  matrix("putf", method_putf, { dst, "%d", 1 }, 2, { 5, true, {}, avxbuf.new() }, 1)
  matrix("putf", method_putf, { dst, "%d", 1 }, 3, { "x", true, {} }, 2)
  matrix("reserve", method_reserve, { dst, 4 }, 2, join(NOT_INTEGERS, { -1, MIN, MAX }), 1)
  matrix("split", method_split, { dst, ",", 1 }, 2, { 5, true, {}, "", avxbuf.new() }, 1)
  matrix("split", method_split, { dst, ",", 1 }, 3, NOT_INTEGERS, 2)
  matrix("lines", method_lines, { dst, 1 }, 2, NOT_INTEGERS, 1)
end

-- One wording per error: every way to grow a buffer past its largest size
-- says what reserve says (naming its own argument), and a count of one is
-- "1 byte".
function TestBadInput.test_one_wording_per_error()
  local function message(f, ...)
    local ok, err = pcall(f, ...)
    lu.assertFalse(ok)
    return tostring(err)
  end
  local b = avxbuf.from("x")
  local words = message(function() b:reserve(2 ^ 62) end):match("%((the buffer would exceed %d+ bytes)%)$")
  lu.assertNotNil(words, "reserve's words")
  local largest = tonumber(words:match("%d+"))
  -- (put, putf and pack reach it only with arguments of 2^48 bytes in all)
  local f = io.tmpfile()
  lu.assertStrContains(message(function() b:read(f, largest) end), "bad argument #2 to 'read' (" .. words .. ")")
  lu.assertEquals(b:tostring(), "x", "read changed the buffer")
  f:close()
  for _, case in ipairs {
    { "bad argument #1 to 'unpack' (data too short: 1 byte needed at index 1 of a 0-byte buffer)",
      function() avxbuf.new():unpack(1, "b") end },
    { "bad argument #1 to 'unpack' (data too short: 2 bytes needed at index 1 of a 0-byte buffer)",
      function() avxbuf.new():unpack(1, "i2") end },
    { "bad argument #3 to 'copy' (1 byte does not fit at index 2 of a 1-byte buffer)",
      function() avxbuf.copy(b, 2, "y") end },
    { "bad argument #3 to 'copy' (2 bytes do not fit at index 1 of a 1-byte buffer)",
      function() avxbuf.copy(b, 1, "yz") end },
    { "bad argument #5 to 'copy' (length 2 exceeds the 1 byte of the source from index 1)",
      function() avxbuf.copy(b, 1, "y", 1, 2) end },
    { "bad argument #3 to 'zero' (length 3 exceeds the 2 bytes of the buffer from index 1)",
      function() avxbuf.zero(avxbuf.new(2), 1, 3) end },
  } do
    lu.assertStrContains(message(case[2]), case[1])
  end
end

function TestBadInput.test_unallocatable_size_is_a_memory_error()
  if avxbuf.cpu().arch == "i386" then
    -- A 32-bit size_t caps a buffer at 1 GiB: more is a bad size (whether
    -- 1 GiB itself fits depends on the address space left; the 64-bit
    -- builds test the memory error).
    local ok, err = pcall(avxbuf.new, 2 ^ 31)
    lu.assertFalse(ok)
    lu.assertStrContains(err, "(size too large)")
    lu.assertEquals(#avxbuf.new(3), 3, "the state lives on")
    return
  end
  local ok, err = pcall(avxbuf.new, 2 ^ 47)
  lu.assertFalse(ok)
  -- LuaJIT refuses userdata over 4 GiB before it asks for memory.
  lu.assertNotNil(tostring(err):find("not enough memory", 1, true)
                  or (jit and tostring(err):find("userdata length overflow", 1, true)), err)
  lu.assertEquals(#avxbuf.new(3), 3, "the state lives on")
end

function TestBadInput.test_configure_is_all_or_nothing()
  local before = avxbuf.config()
  local bad = { 5, "use_avx=2", { use_avx = 4 }, { use_avx = -1 }, { use_avx = 1.5 },
                { use_avx = "2" }, { max_vector_size = 48 }, { avx3_threshold = -1 },
                { rep_movsb_threshold = 1.5 }, { nontemporal_threshold = NAN },
                { rep_stosb_threshold = 2 ^ 63 }, { vector_zeroing = 1 }, { vector_zeroing = "false" },
                { kernel = "fast" }, { kernel = true }, { [1] = 2 }, { bogus = 1 },
                { use_avx = 0, bogus = 1 }, { use_avx = 0, max_vector_size = 8 } }
  for _, t in ipairs(bad) do
    local ok, err = pcall(configure, t)
    lu.assertFalse(ok)
    lu.assertStrContains(err, "bad argument #1 to 'configure' (")
    lu.assertEquals(avxbuf.config(), before)
  end
  local _, err = pcall(configure, { bogus = 1 })
  lu.assertStrContains(err, "unknown knob 'bogus'")
  lu.assertStrContains(err, "use_avx, max_vector_size")
end

function TestBadInput.test_decide_checks_types()
  for _, t in ipairs { 5, { vendor = 5 }, { vendor = ("x"):rep(13) }, { leaf1_eax = "x" },
                       { leaf1_eax = -1 }, { leaf7_ebx = 2 ^ 32 }, { leaf1_ecx = 1.5 },
                       { xcr0 = "7" } } do
    local ok, err = pcall(decide, t)
    lu.assertFalse(ok)
    lu.assertStrContains(err, "bad argument #1 to 'decide' (")
  end
end
