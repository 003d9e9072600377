-- find's plain search (every kernel's, against string.find plain: buf:find
-- with plain = true; spec/match_spec.lua has the patterns), compare (against a
-- byte-by-byte reference), the metamethods, hex dumps and ref.
local lu = require "luaunit"
local h = require "helpers"
local avxbuf = h.avxbuf

-- string.find(s, p, init, true) with Lua 5.4's rules, on every Lua version:
-- 5.1's string.find answers differently for an init past the end.
local function find_reference(s, p, init)
  init = init or 1
  if init < 0 then init = math.max(#s + init + 1, 1) elseif init == 0 then init = 1 end
  if init > #s + 1 then return nil end
  return s:find(p, init, true)
end

-- A byte-by-byte reference for compare.
local function compare_reference(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = a:byte(i), b:byte(i)
    if x ~= y then return x < y and -1 or 1 end
  end
  return #a < #b and -1 or #a > #b and 1 or 0
end

TestFind = {}

function TestFind.test_string_find_rules()
  local s = "hello, world. (hello)? [x]"
  local b = avxbuf.from(s)
  for _, p in ipairs { "hello", "o", "world", "xyz", "", "hello, world. (hello)? [x]!", "lo, w", ",", "d. (",
                       "(hello)?", "[x]", ".", "?" } do
    for init = -30, 30 do
      lu.assertEquals({ b:find(p, init, true) }, { find_reference(s, p, init) }, string.format("%q from %d", p, init))
    end
    lu.assertEquals({ b:find(p, nil, true) }, { find_reference(s, p) })
    lu.assertEquals({ b:find(avxbuf.from(p), 1, true) }, { find_reference(s, p) }, "a buffer as the needle")
  end
  -- without a magic byte the search is plain without plain = true
  for _, p in ipairs { "hello", "lo, w", "", "xyz", "] " } do
    lu.assertEquals({ b:find(p, 3) }, { find_reference(s, p, 3) })
    lu.assertEquals({ b:find(avxbuf.from(p)) }, { find_reference(s, p) })
  end
  lu.assertEquals({ avxbuf.new():find("") }, { 1, 0 })
  lu.assertNil(avxbuf.new():find("a"))
  lu.assertEquals({ b:find(b, 1, true) }, { 1, #s })
end

-- Every kernel's search, where its strategy changes: sizes, needle lengths,
-- alignments, matches at the last possible place, near misses (first and
-- last byte right, the middle wrong), and periodic text that exhausts the
-- vector path's budget.
local function check_kernel_find(cfg)
  h.use(cfg.knobs)
  local function check(s, p, what)
    local b = avxbuf.from(s)
    local got, want = { b:find(p, 1, true) }, { find_reference(s, p) }
    if got[1] ~= want[1] or got[2] ~= want[2] then
      error(string.format("%s: %s: find(%d-byte needle) in %d bytes gave %s, expected %s", cfg.name, what, #p,
                          #s, tostring(got[1]), tostring(want[1])), 2)
    end
  end
  local text = h.pattern(5000, 77)
  for n = 0, h.LIGHT and 130 or 260, h.LIGHT and 3 or 1 do
    local s = text:sub(1, n)
    for _, m in ipairs { 1, 2, 3, 7, 16, 31, 32, 33, 63, 64, 65 } do
      if m <= n then
        check(s, s:sub(n - m + 1), "at the end")
        check(s, s:sub(1, m), "at the start")
        local mid = math.floor((n - m) / 2) + 1
        check(s, s:sub(mid, mid + m - 1), "in the middle")
      end
      -- first and last bytes right, the middle wrong: a candidate to reject
      if m >= 3 and m <= n then
        local p = s:sub(1, 1) .. ("\255"):rep(m - 2) .. s:sub(m, m)
        check(s, p, "near miss")
      end
    end
  end
  -- periodic text: many candidates that fail late
  local a = ("a"):rep(20000)
  check(a .. "b", ("a"):rep(100) .. "b", "periodic, found at the end")
  check(a, ("a"):rep(100) .. "b", "periodic, absent")
  check(("ab"):rep(10000) .. "abb", "abb", "periodic pairs")
  -- a large haystack at every misalignment of the data
  local big = h.long_pattern(100000, 5)
  for off = 0, 63, h.LIGHT and 21 or 7 do
    check(big:sub(off + 1), big:sub(90001, 90040), "100 KB, offset " .. off)
  end
  avxbuf.reset()
end

for _, cfg in ipairs(h.kernel_configs()) do
  TestFind["test_kernel_" .. cfg.name] = function() check_kernel_find(cfg) end
end

function TestFind.test_kernel_names_the_search()
  lu.assertEquals(type(avxbuf.kernel("find", 100)), "string")
  h.use { kernel = "libc" }
  lu.assertEquals(avxbuf.kernel("find", 100), "libc")
  avxbuf.reset()
end

TestCompare = {}

function TestCompare.test_compare_against_bytes()
  local samples = { "", "a", "b", "ab", "abc", "abd", "\0", "\0\0", "\255", "a\0", "\128", "\127" }
  for i = 1, 30 do samples[#samples + 1] = h.pattern(i % 7, i) end
  for _, x in ipairs(samples) do
    for _, y in ipairs(samples) do
      local want = compare_reference(x, y)
      lu.assertEquals(avxbuf.compare(x, y), want)
      lu.assertEquals(avxbuf.compare(avxbuf.from(x), y), want)
      lu.assertEquals(avxbuf.compare(x, avxbuf.from(y)), want)
      local bx, by = avxbuf.from(x), avxbuf.from(y)
      lu.assertEquals(bx == by, want == 0)
      lu.assertEquals(bx < by, want < 0)
      lu.assertEquals(bx <= by, want <= 0)
    end
  end
  local ok, err = pcall(avxbuf.compare, "a", 5)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "bad argument #2")
end

function TestCompare.test_equality_needs_two_buffers()
  local b = avxbuf.from("abc")
  lu.assertFalse(b == "abc", "a buffer is not a string")
  lu.assertTrue(b == avxbuf.from("abc"))
  lu.assertFalse(b == io.stdout)
end

-- Lua 5.2 and later ask __lt/__le of a buffer and a string; 5.1 and LuaJIT
-- compare only two values of one type and raise before any metamethod
-- (README says so: compare() works everywhere).
function TestCompare.test_order_between_a_buffer_and_a_string()
  local b = avxbuf.from("abc")
  local mixed = _VERSION ~= "Lua 5.1"   -- LuaJIT reports 5.1 too
  local ok, lt = pcall(function() return b < "abd" end)
  lu.assertEquals(ok, mixed, lt)
  if mixed then
    lu.assertTrue(lt)
    lu.assertFalse("abd" <= b)
    lu.assertTrue(b <= "abc")
  else
    lu.assertStrContains(lt, "attempt to compare")
  end
  lu.assertEquals(avxbuf.compare(b, "abd"), -1)
end

function TestCompare.test_tostring_and_concat_give_strings()
  local b = avxbuf.from("abc")
  lu.assertEquals(tostring(b), "abc")
  lu.assertEquals(b .. "def", "abcdef")
  lu.assertEquals("x" .. b, "xabc")
  lu.assertEquals(b .. b, "abcabc")
  lu.assertEquals(b .. 5, "abc5")
  lu.assertFalse(pcall(function() return b .. {} end))
end

TestHex = {}

function TestHex.test_dump_like_hexdump_c()
  local b = avxbuf.from("hello, world\n" .. string.char(0, 1, 127, 128, 255) .. ("A"):rep(20))
  lu.assertEquals(b:hex(1, 16),
    "00000000  68 65 6c 6c 6f 2c 20 77  6f 72 6c 64 0a 00 01 7f  |hello, world....|\n00000010\n")
  local lines = {}
  for line in b:hex():gmatch("[^\n]+") do lines[#lines + 1] = line end
  lu.assertEquals(#lines, 4)
  lu.assertEquals(lines[2], "00000010  80 ff 41 41 41 41 41 41  41 41 41 41 41 41 41 41  |..AAAAAAAAAAAAAA|")
  lu.assertEquals(lines[3], "00000020  41 41 41 41 41 41                                 |AAAAAA|")
  lu.assertEquals(lines[4], "00000026")
  lu.assertEquals(b:hex(18, 19), "00000011  ff 41                                             |.A|\n00000013\n")
  lu.assertEquals(b:hex(5, 4), "")
  lu.assertEquals(avxbuf.new():hex(), "")
  -- a run of lines equal to the one before is one "*"; a short last line is never squeezed
  local z = avxbuf.new(100)
  lu.assertEquals(z:hex(), "00000000  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n"
    .. "*\n00000060  00 00 00 00                                       |....|\n00000064\n")
end

-- Byte for byte what hexdump -C prints (hexdump -s for a range), on data
-- with runs of equal lines at and away from the end.
function TestHex.test_same_as_hexdump()
  h.needs_children()
  local _, status = h.shell("command -v hexdump")
  if status ~= 0 then lu.skip("no hexdump here (Debian: bsdextrautils)") end
  local path = os.tmpname()
  local cases = {
    h.pattern(1000, 3),
    ("\0"):rep(64) .. "x",
    h.pattern(16, 1):rep(5) .. h.pattern(7, 2),
    h.pattern(16, 4):rep(3),
    ("ab"):rep(8) .. ("ab"):rep(8) .. "abab" .. h.pattern(40, 5) .. ("\255"):rep(48),
  }
  for k, data in ipairs(cases) do
    local f = assert(io.open(path, "wb"))
    f:write(data)
    f:close()
    local b = avxbuf.from(data)
    for _, range in ipairs { { 1, #data }, { 6, #data }, { 17, #data - 3 }, { 2, 2 } } do
      local i, j = range[1], range[2]
      local want = h.shell(string.format("hexdump -C -s %d -n %d %s", i - 1, j - i + 1, h.sh(path)))
      lu.assertEquals(b:hex(i, j), want, string.format("case %d, bytes %d..%d", k, i, j))
    end
  end
  os.remove(path)
end

function TestHex.test_ref_gives_the_data()
  local b = avxbuf.from("abc")
  local p, n = b:ref()
  lu.assertEquals(type(p), "userdata")
  lu.assertEquals(n, 3)
  lu.assertEquals(h.address(b) % 64, 0)
end
