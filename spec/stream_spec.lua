-- Streams (docs/streams.md): skip, get and the stream form of unpack
-- against a plain-string model, their errors, short data on every
-- truncation of a set of formats, compaction keeping the bytes, and the
-- bytes compaction moves staying linear in the bytes streamed.
local lu = require "luaunit"
local h = require "helpers"
local avxbuf = h.avxbuf

TestStream = {}

-- The error of calling f as a method call in a function of its own (so
-- that the message names the method as Lua sees the call).
local function error_of(f)
  local ok, err = pcall(f)
  lu.assertFalse(ok, "no error")
  return tostring(err)
end

local function assert_error(pattern, f)
  local err = error_of(f)
  lu.assertStrContains(err, pattern, false)
end

function TestStream.test_get_and_skip_against_string_sub()
  local data = h.pattern(3000, 11)
  for _, len in ipairs { 0, 1, 2, 15, 16, 17, 63, 64, 65, 127, 128, 129, 1000, 3000 } do
    local s = data:sub(1, len)
    for _, n in ipairs { 0, 1, 2, 7, 63, 64, 65, 500, 2999, 3000, 3001, 2 ^ 40 } do
      local m = math.min(n, #s)   -- (LuaJIT's string.sub takes 2^40 as 0)
      local b = avxbuf.from(s)
      lu.assertEquals(b:get(n), s:sub(1, m), "get")
      lu.assertEquals(b:tostring(), s:sub(m + 1), "after get")
      lu.assertEquals(#b, #s - m)
      b = avxbuf.from(s)
      lu.assertIs(b:skip(n), b)
      lu.assertEquals(b:tostring(), s:sub(m + 1), "after skip")
    end
    local b = avxbuf.from(s)
    lu.assertEquals(b:get(), s, "get()")
    lu.assertEquals(#b, 0)
    lu.assertEquals(b:get(), "")
  end
end

-- After consuming, every index-based method sees the unread bytes as
-- 1..#buf.
function TestStream.test_index_methods_see_the_unread_bytes()
  local data = "skip me|" .. h.pattern(200, 3) .. "\nline two\nend"
  for _, n in ipairs { 1, 8, 64, 65 } do
    local s = data:sub(n + 1)
    local b = avxbuf.from(data):skip(n)
    lu.assertEquals(b:tostring(), s)
    lu.assertEquals(b:tostring(3, 9), s:sub(3, 9))
    lu.assertEquals({ b:byte(1, 5) }, { s:byte(1, 5) })
    lu.assertEquals({ b:find("line", 1, true) }, { s:find("line", 1, true) })
    lu.assertEquals({ b:match("(l%a+) (%a+)") }, { s:match("(l%a+) (%a+)") })
    lu.assertEquals(b:rfind("e"), (s:find("e[^e]*$")))
    lu.assertEquals({ b:unpack(1, "<I4 B") }, { avxbuf.from(s):unpack(1, "<I4 B") })
    lu.assertEquals(b:hex(), avxbuf.from(s):hex())
    local lines, want = {}, {}
    for l in b:lines() do lines[#lines + 1] = l end
    for l in (s .. "\n"):gmatch("(.-)\n") do want[#want + 1] = l end
    lu.assertEquals(lines, want)
    lu.assertEquals(avxbuf.compare(b, s), 0)
    b:copy(1, "XY")
    b:fill(0x5A, 3, 2)
    lu.assertEquals(b:tostring(), "XYZZ" .. s:sub(5))
    lu.assertEquals(avxbuf.from(b):tostring(), "XYZZ" .. s:sub(5))
    lu.assertEquals(b:pack(2, "B", 0x21), 3)
    lu.assertEquals(b:tostring(1, 4), "X!ZZ")
    lu.assertTrue(b:capacity() >= #b)
  end
end

-- A random run of appends, consumption and index-based reads and writes
-- against a plain string: compaction and growth never lose or move a byte
-- of what is unread.
function TestStream.test_random_runs_against_a_string_model()
  local r = h.rng(31)
  local runs, steps = h.LIGHT and 4 or 20, h.LIGHT and 200 or 800
  for _ = 1, runs do
    local b, model = avxbuf.new(), ""
    for _ = 1, steps do
      local op = r(10)
      if op <= 2 then
        local piece = h.pattern(r(4) == 0 and r(3000) or r(100), r(1000))
        b:put(piece)
        model = model .. piece
      elseif op == 3 then
        local n = r(#model + 10)
        lu.assertEquals(b:get(n), model:sub(1, n))
        model = model:sub(n + 1)
      elseif op == 4 then
        local n = r(#model + 10)
        b:skip(n)
        model = model:sub(n + 1)
      elseif op == 5 then
        local n = r(2 * #model + 10)
        b:resize(n)
        model = (model .. ("\0"):rep(n)):sub(1, n)
      elseif op == 6 then
        b:reserve(r(5000))
      elseif op == 7 then
        local v = r(65536)
        b:pack("<I2", v)
        model = model .. string.char(v % 256, math.floor(v / 256))
      elseif op == 8 and #model >= 2 then
        local v = b:unpack("<I2")
        lu.assertEquals(v, model:byte(1) + 256 * model:byte(2))
        model = model:sub(3)
      elseif op == 9 and r(20) == 0 then
        b:reset()
        model = ""
      end
      lu.assertEquals(#b, #model)
      lu.assertTrue(b:capacity() >= #b)
    end
    h.assert_bytes(b:tostring(), model, "after the run")
  end
end

function TestStream.test_reset_and_growth_start_at_the_block_again()
  local b = avxbuf.new(1000)
  local cap = b:capacity()
  b:skip(100)
  lu.assertEquals(b:capacity(), cap - 100)   -- the room from the first unread byte
  b:reset()
  lu.assertEquals(b:capacity(), cap)
  lu.assertEquals(h.address(b) % 64, 0)
  b:put(("a"):rep(cap)):skip(1)
  lu.assertNotEquals(h.address(b) % 64, 0)   -- the first unread byte: no longer aligned
  b:put("bb")   -- more than the block holds: grows, data at the new block's start
  lu.assertEquals(h.address(b) % 64, 0)
  lu.assertEquals(b:tostring(), ("a"):rep(cap - 1) .. "bb")
  local block = b:capacity()
  b:skip(cap - 100)
  local times = avxbuf.compactions()
  b:put(("c"):rep(block - 400))   -- more than the capacity, well within the block: compacted
  lu.assertEquals(avxbuf.compactions(), times + 1)
  lu.assertEquals(b:capacity(), block)
  lu.assertEquals(h.address(b) % 64, 0)
  lu.assertEquals(b:tostring(), ("a"):rep(99) .. "bb" .. ("c"):rep(block - 400))
end

function TestStream.test_bad_arguments()
  local b = avxbuf.from("abc")
  assert_error("bad argument #1 to 'skip' (count must not be negative)", function() b:skip(-1) end)
  assert_error("bad argument #1 to 'skip' (number expected, got ", function() b:skip() end)
  assert_error("bad argument #1 to 'skip'", function() b:skip(1.5) end)
  assert_error("bad argument #1 to 'skip'", function() b:skip("x") end)
  assert_error("bad argument #1 to 'get' (count must not be negative)", function() b:get(-1) end)
  assert_error("bad argument #1 to 'get'", function() b:get(1.5) end)
  assert_error("bad argument #1 to 'get'", function() b:get({}) end)
  assert_error("bad argument #1 to 'get'", function() b:get(0 / 0) end)
  assert_error("bad argument #1 to 'skip'", function() b:skip(1 / 0) end)
  assert_error("bad argument #1 to 'skip'", function() avxbuf.new().skip("x", 1) end)
  assert_error("bad argument #1 to 'get'", function() avxbuf.new().get(io.stdout) end)
  -- the stream form of unpack: a malformed format raises, short or not
  assert_error("bad argument #1 to 'unpack' (integral size (17) out of limits [1,16])",
               function() b:unpack("i17") end)
  assert_error("bad argument #1 to 'unpack' (invalid format option 'w')", function() b:unpack("<I4 w") end)
  assert_error("bad argument #1 to 'unpack' (invalid format option 'w')", function() b:unpack("<I2 w") end)
  assert_error("bad argument #1 to 'unpack' (invalid format option 'w')", function() b:unpack("w") end)
  -- a string followed by something is the index form's index
  assert_error("bad argument #1 to 'unpack' (number expected, got string)", function() b:unpack("x", "b") end)
  -- a length that no buffer can hold is not short: it raises
  local huge = avxbuf.new()
  huge:pack("<I8", 2 ^ 52)
  assert_error("bad argument #1 to 'unpack' (data too short", function() huge:unpack("<s8") end)
  lu.assertEquals(b:tostring(), "abc")
  lu.assertEquals(#huge, 8)
end

-- Each format, packed whole, then cut at every length: the stream form
-- says short, with a count of missing bytes that is at least 1, never
-- more than the frame needs (and exactly that for a format of fixed
-- size), and consumes nothing; whole, it gives the index form's values
-- and consumes what that form read.
local FORMATS = {
  { "<I4", 0x01020304 }, { ">i2 <d", -3, 2.5 }, { "B f", 7, 0.25 }, { ">s4", "a frame" },
  { "<s1 B", "", 9 }, { "z", "zero-ended" }, { "<I2 z B", 5, "z", 6 }, { "!8 b d", 1, -1.5 },
  { "<i3 xx s2 c5", -5, "str", "fixed" }, { "<I4 s2 z", 1, "two", "three" }, { "Xi4 b", 3 },
  { "b Xi4 i4", 1, 2 }, { "<j J n", -1, 3, 1.5 }, { ">I16 i9", 2 ^ 40, -2 },
}

local function fixed_size(fmt)
  return not fmt:find("[sz]")
end

function TestStream.test_short_data_on_every_truncation()
  for _, case in ipairs(FORMATS) do
    local fmt = case[1]
    local packed = avxbuf.new()
    packed:pack(fmt, h.unpack(case, 2))
    local frame = packed:tostring()
    local whole = { packed:unpack(1, fmt) }
    lu.assertEquals(table.remove(whole), #frame + 1)
    for k = 0, #frame - 1 do
      local b = avxbuf.from(frame:sub(1, k))
      local v, why, missing = b:unpack(fmt)
      lu.assertNil(v, fmt .. " cut at " .. k)
      lu.assertEquals(why, "short")
      lu.assertTrue(missing >= 1 and k + missing <= #frame, fmt .. " cut at " .. k .. ": " .. missing)
      if fixed_size(fmt) then lu.assertEquals(missing, #frame - k, fmt) end
      -- at the least: one byte fewer than it says is still short
      lu.assertNil((avxbuf.from(frame:sub(1, k + missing - 1)):unpack(fmt)), fmt .. " cut at " .. k)
      lu.assertEquals(b:tostring(), frame:sub(1, k), "consumed nothing")
      -- the index form still raises
      lu.assertFalse(pcall(b.unpack, b, 1, fmt))
    end
    -- whole, and followed by the start of the next frame
    for _, extra in ipairs { "", frame:sub(1, 1), frame } do
      local b = avxbuf.from(frame .. extra)
      lu.assertEquals({ b:unpack(fmt) }, whole, fmt)
      lu.assertEquals(b:tostring(), extra, fmt .. ": consumed")
    end
  end
end

-- The string library's unpack (5.3 and 5.4) agrees on the values.
function TestStream.test_stream_values_match_string_unpack()
  if not string.unpack then lu.skip("no string.unpack before 5.3") end
  for _, case in ipairs(FORMATS) do
    local frame = string.pack(case[1], h.unpack(case, 2))
    local want = { string.unpack(case[1], frame) }
    want[#want] = nil
    lu.assertEquals({ avxbuf.from(frame):unpack(case[1]) }, want, case[1])
  end
end

-- A receiver of length-prefixed frames over random chunks: get what is
-- whole, wait for the rest.
function TestStream.test_a_frame_receiver()
  local r = h.rng(5)
  local frames, wire = {}, {}
  for i = 1, h.LIGHT and 50 or 400 do
    frames[i] = h.pattern(r(3000), i)
    local w = avxbuf.new()
    w:pack(">s4", frames[i])
    wire[i] = w:tostring()
  end
  wire = table.concat(wire)
  local b, got, at = avxbuf.new(), {}, 1
  while at <= #wire do
    local n = 1 + r(8192)
    b:put(wire:sub(at, at + n - 1))
    at = at + n
    while true do
      local frame, why = b:unpack(">s4")
      if frame == nil then
        lu.assertEquals(why, "short")
        break
      end
      got[#got + 1] = frame
    end
  end
  lu.assertEquals(#b, 0)
  lu.assertEquals(#got, #frames)
  for i = 1, #frames do h.assert_bytes(got[i], frames[i], "frame " .. i) end
end

-- Consuming one byte a call from a 16 MiB buffer that is appended to as
-- it goes: the bytes compaction moves (avxbuf.compactions) stay within a
-- small multiple of the bytes streamed, and grow as they do (two sizes).
function TestStream.test_consuming_a_byte_a_call_moves_linearly_few_bytes()
  local function run(size)
    local b = avxbuf.new(size)
    local piece = ("p"):rep(4096)
    local times0, moved0 = avxbuf.compactions()
    for i = 1, size do
      b:skip(1)
      if i % 4096 == 0 then b:put(piece) end
    end
    local times, moved = avxbuf.compactions()
    lu.assertEquals(#b, size)
    lu.assertEquals(b:tostring(size - 4095), piece)
    return times - times0, moved - moved0
  end
  local small, large = 2 ^ 18, h.LIGHT and 2 ^ 20 or 2 ^ 24
  local _, moved_small = run(small)
  local times, moved_large = run(large)
  lu.assertTrue(times >= 1, "no compaction")
  lu.assertTrue(moved_large <= 8 * large, "moved " .. moved_large)
  -- linear: 16 (or 4) times the bytes, at most about as many times the moves
  lu.assertTrue(moved_large <= 2 * (large / small) * math.max(moved_small, small),
                moved_small .. " then " .. moved_large)
  -- a queue of constant length, a byte in and a byte out per call
  local b, c0, m0 = avxbuf.new(), avxbuf.compactions()
  local n = h.LIGHT and 20000 or 200000
  b:put(("q"):rep(1000))
  for _ = 1, n do b:put("q"):skip(1) end
  local c1, m1 = avxbuf.compactions()
  lu.assertEquals(b:tostring(), ("q"):rep(1000))
  lu.assertTrue(m1 - m0 <= 8 * n, "moved " .. (m1 - m0))
  lu.assertTrue(c1 - c0 <= n / 100, "compactions " .. (c1 - c0))
end
