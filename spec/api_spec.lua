-- Buffers as a Lua user sees them: construction, reads with string.sub and
-- string.byte semantics, defaults of copy/zero/fill, methods.
local lu = require "luaunit"
local h = require "helpers"
local avxbuf = h.avxbuf

TestBuffer = {}

function TestBuffer.test_new_is_zeroed_or_filled_and_aligned()
  for _, n in ipairs { 0, 1, 63, 64, 65, 1000, 100003 } do
    local b = avxbuf.new(n)
    lu.assertEquals(#b, n)
    lu.assertEquals(b:tostring(), ("\0"):rep(n))
    lu.assertEquals(avxbuf.new(n, 255):tostring(), ("\255"):rep(n))
    lu.assertEquals(avxbuf.new(n, 7.0):tostring(), ("\7"):rep(n))
  end
  -- the data must be 64-byte aligned every time
  for n = 0, 200 do
    lu.assertEquals(h.address(avxbuf.new(n)) % 64, 0, "buffer of " .. n .. " bytes")
  end
end

function TestBuffer.test_tostring_and_byte_follow_string_sub_and_byte()
  -- The reference must be right: LuaJIT 2.1 (Debian 12) miscompiles string.sub
  -- with out-of-range negative indices in traces (246 of 1000 cases of this
  -- loop differ from its interpreter), so the loop runs interpreted there.
  if jit then jit.off(TestBuffer.test_tostring_and_byte_follow_string_sub_and_byte) end
  for n = 0, 9 do
    local s = h.pattern(n, n + 10)
    local b = avxbuf.from(s)
    lu.assertEquals(b:tostring(), s)
    lu.assertEquals({ b:byte() }, { s:byte() })
    for i = -n - 3, n + 3 do
      lu.assertEquals(b:tostring(i), s:sub(i))
      lu.assertEquals({ b:byte(i) }, { s:byte(i) })
      for j = -n - 3, n + 3 do
        lu.assertEquals(b:tostring(i, j), s:sub(i, j), string.format("n=%d i=%d j=%d", n, i, j))
        lu.assertEquals({ b:byte(i, j) }, { s:byte(i, j) }, string.format("n=%d i=%d j=%d", n, i, j))
      end
    end
    lu.assertEquals(b:tostring(h.MININT, h.MAXINT), s)
    lu.assertEquals(b:tostring(h.MAXINT), "")
  end
end

function TestBuffer.test_from_takes_ranges_of_strings_and_buffers()
  local s = h.pattern(50, 3)
  local b = avxbuf.from(s)
  for _, r in ipairs { {}, { 5 }, { -7 }, { 3, 9 }, { 10, 2 }, { -100, 100 }, { 0, 0 } } do
    lu.assertEquals(avxbuf.from(s, r[1], r[2]):tostring(), s:sub(r[1] or 1, r[2] or -1))
    lu.assertEquals(avxbuf.from(b, r[1], r[2]):tostring(), s:sub(r[1] or 1, r[2] or -1))
  end
  local c = avxbuf.from(b)
  c:fill(1)
  lu.assertEquals(b:tostring(), s, "from() copies; it does not share")
end

function TestBuffer.test_copy_defaults()
  local b = avxbuf.new(10, 46)  -- "."
  avxbuf.copy(b, 3, "abc")
  lu.assertEquals(b:tostring(), "..abc.....")
  avxbuf.copy(b, 1, "xyz", 2)
  lu.assertEquals(b:tostring(), "yzabc.....")
  avxbuf.copy(b, 9, "12345", 4, 2)
  lu.assertEquals(b:tostring(), "yzabc...45")
  avxbuf.copy(b, 11, "", 1)          -- n = 0 at #buf + 1
  avxbuf.copy(b, 11, "abc", 4)       -- si = #src + 1, n defaults to 0
  avxbuf.copy(b, 5, "abc", 2, 0)
  lu.assertEquals(b:tostring(), "yzabc...45")
  local src = avxbuf.from("0123456789")
  b:copy(1, src, 6)
  lu.assertEquals(b:tostring(), "56789...45")
  b:copy(2, b, 1, 4)                 -- overlapping, same buffer
  lu.assertEquals(b:tostring(), "55678...45")
end

function TestBuffer.test_zero_and_fill_defaults()
  local b = avxbuf.new(8, 1)
  b:zero(7)
  lu.assertEquals(b:tostring(), "\1\1\1\1\1\1\0\0")
  avxbuf.fill(b, 65, 2, 3)
  lu.assertEquals(b:tostring(), "\1AAA\1\1\0\0")
  b:fill(66)
  lu.assertEquals(b:tostring(), "BBBBBBBB")
  avxbuf.zero(b, 3, 0)
  avxbuf.zero(b, 9)                  -- empty range at #buf + 1
  lu.assertEquals(b:tostring(), "BBBBBBBB")
  avxbuf.zero(b)
  lu.assertEquals(b:tostring(), ("\0"):rep(8))
end

function TestBuffer.test_methods_are_the_module_functions()
  local b = avxbuf.new(4)
  if avxbuf.ffi then
    -- LuaJIT's FFI path: the methods are wrappers of their own, numbering
    -- arguments as method calls do; they must behave as the functions.
    b:copy(2, "xy")
    avxbuf.copy(b, 4, "z")
    lu.assertEquals(b:tostring(), "\0xyz")
  else
    lu.assertEquals(b.copy, avxbuf.copy)
    lu.assertEquals(b.zero, avxbuf.zero)
    lu.assertEquals(b.fill, avxbuf.fill)
  end
  lu.assertEquals(#avxbuf.new(0), 0)
  lu.assertEquals(tostring(b), b:tostring(), "tostring gives the contents, as string.buffer's does")
  lu.assertEquals(type(avxbuf.emulated), "boolean")
end

function TestBuffer.test_luajit_takes_the_ffi_path()
  lu.assertEquals(avxbuf.ffi, jit ~= nil, "avxbuf.ffi")
end

-- The version is the header's, which the Makefile and the release rockspec
-- follow: a release rock must not call itself something else.
function TestBuffer.test_version_is_the_release_rockspecs()
  lu.assertStrMatches(avxbuf.version, "%d+%.%d+%.%d+")
  local f = io.open("avxbuf-" .. avxbuf.version .. "-1.rockspec")
  lu.assertNotNil(f, "avxbuf-" .. avxbuf.version .. "-1.rockspec")
  local text = f:read("*a")
  f:close()
  lu.assertStrContains(text, 'version = "' .. avxbuf.version .. '-1"')
end
