-- The C API (include/avxbuf.h) from a separate C module (spec/capi_module.c)
-- that reaches avxbuf only through the table in the Lua state.
local lu = require "luaunit"
local h = require "helpers"
local avxbuf = h.avxbuf

local have_capi, capi = pcall(require, "capi")

TestCApi = {}

function TestCApi.setUp()
  if not have_capi then lu.skip("the C API test module is not built here") end
end

function TestCApi.test_recognises_buffers_only()
  lu.assertTrue(capi.isbuffer(avxbuf.new(3)))
  for _, v in ipairs { "abc", 5, {}, true, io.stdout } do lu.assertFalse(capi.isbuffer(v)) end
  local ok, err = pcall(capi.sum, "abc")
  lu.assertFalse(ok)
  lu.assertStrContains(err, "avxbuf.buffer expected, got string")
end

function TestCApi.test_reads_creates_grows_and_writes()
  local b = avxbuf.from("\1\2\3\250")
  lu.assertEquals(capi.sum(b), 256)
  local c = capi.new(100, 7)
  lu.assertEquals(c:tostring(), ("\7"):rep(100))
  lu.assertEquals(capi.sum(capi.new(0, 1)), 0)
  lu.assertIs(capi.append(b, "xyz"), b)
  lu.assertEquals(b:tostring(), "\1\2\3\250xyz")
  local big = h.long_pattern(70000, 3)
  capi.append(b, big)   -- grows: the data moves
  lu.assertEquals(b:tostring(), "\1\2\3\250xyz" .. big)
  lu.assertEquals(h.address(b) % 64, 0)
end

function TestCApi.test_uses_the_states_settings()
  -- the table's copy and fill pick kernels by this state's knobs: observable
  -- only as the right bytes, under every kernel this build runs
  for _, cfg in ipairs(h.kernel_configs()) do
    h.use(cfg.knobs)
    local b = avxbuf.from(h.pattern(5000, 1))
    capi.append(b, h.pattern(3000, 2))
    lu.assertEquals(b:tostring(), h.pattern(5000, 1) .. h.pattern(3000, 2), cfg.name)
    lu.assertEquals(capi.new(4000, 9):tostring(), ("\9"):rep(4000), cfg.name)
  end
  avxbuf.reset()
end

-- Sizes in bytes, whatever their size (an int cast once said "-1 GiB"), and
-- a relative index named as the argument it is.
function TestCApi.test_messages()
  local ok, err = pcall(capi.newbuffer, -1)
  lu.assertFalse(ok)
  lu.assertStrMatches(err, ".*a buffer of %d+ bytes is too large %(at most %d+%)")
  lu.assertNil(err:find("-", 1, true), err)
  lu.assertEquals(#capi.newbuffer(10), 10)
  ok, err = pcall(capi.resize_top, "not a buffer", 10)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "bad argument #1")
  lu.assertEquals(#capi.resize_top(avxbuf.new(3), 7), 7)
end

function TestCApi.test_version()
  lu.assertEquals(capi.version(), 1)
end

-- A module built for another version of the header gets a clear error.
function TestCApi.test_version_mismatch_is_a_clear_error()
  h.needs_children()
  local dir = os.getenv("AVXBUF_SPEC_DIR") or "build"
  local out = h.run_child({ LUA_CPATH = dir:gsub("/emul$", "") .. "/capi_future/?.so;" .. dir .. "/?.so" }, [[
    local capi = require "capi"
    print(pcall(capi.sum, require("avxbuf").new(1)))
  ]])
  lu.assertStrContains(out, "false")
  lu.assertStrContains(out, "built for avxbuf C API version 2, but the avxbuf loaded provides version 1")
end
