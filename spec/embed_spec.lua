-- The module is complete on its own: the Lua code it runs (the LuaJIT FFI
-- path, avxbuf.tune's decisions) is compiled into avxbuf.so, so a process
-- whose package.path finds none of lua/ (nor a decoy of it) gets the same
-- module. Errors raised from that code and from C name the caller's
-- chunk:line. Each case is a child process of this interpreter with LUA_PATH
-- and LUA_CPATH set to nothing but what it says.
local lu = require "luaunit"
local h = require "helpers"

-- The directory whose avxbuf.so this run tests (spec/run.lua puts it first).
local function build_dir()
  return os.getenv("AVXBUF_SPEC_DIR") or assert(package.cpath:match("^([^;]*)/%?%.so"), package.cpath)
end

-- Runs code (a file, so that errors name it) in a child of this
-- interpreter with package.path = path and only the build's cpath. Every
-- version's variable is set: LUA_PATH_5_4 would win over LUA_PATH.
local function run(code, path)
  h.needs_children()
  local file = os.tmpname()
  local f = assert(io.open(file, "w"))
  f:write(code)
  f:close()
  local env = { LUA_PATH = path, LUA_CPATH = build_dir() .. "/?.so" }
  for _, v in ipairs { "5_2", "5_3", "5_4" } do
    env["LUA_PATH_" .. v] = env.LUA_PATH
    env["LUA_CPATH_" .. v] = env.LUA_CPATH
  end
  local out, status = h.run_child(env, string.format("dofile(%q)", file))
  os.remove(file)
  return out, status, file
end

-- A directory holding lua/avxbuf/ffi.lua and tune.lua that fail if loaded.
local function decoy()
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p " .. h.sh(dir .. "/avxbuf")))
  for _, name in ipairs { "ffi", "tune" } do
    local f = assert(io.open(dir .. "/avxbuf/" .. name .. ".lua", "w"))
    f:write("error('the decoy avxbuf." .. name .. " was loaded')\n")
    f:close()
  end
  return dir
end

local function remove(dir)
  os.execute("rm -rf " .. h.sh(dir))
end

local NOWHERE = "/nonexistent/?.lua"

-- Runs code with a package.path that finds no Lua file, then with one that
-- finds only the decoy: each run must exit 0, and check(out, where) sees
-- its output. The decoy is removed whatever the outcome, skips included
-- (run skips under qemu-user).
local function run_without_lua_files(code, check)
  local dir = decoy()
  local ok, err = pcall(function()
    for _, path in ipairs { NOWHERE, dir .. "/?.lua" } do
      local out, status = run(code, path)
      lu.assertEquals(status, 0, out)
      check(out, "LUA_PATH=" .. path)
    end
  end)
  remove(dir)
  if not ok then error(err, 0) end
end

TestEmbedded = {}

function TestEmbedded.test_ffi_path_without_lua_files()
  if not jit then lu.skip("the FFI path is LuaJIT's") end
  run_without_lua_files([[
    local avxbuf = require "avxbuf"
    print("ffi", avxbuf.ffi)
    local b = avxbuf.new()
    b:put("ab", "cd")
    b:copy(1, "x")
    b:fill(61, 4)
    print("bytes", b:tostring())
  ]], function(out, where)
    lu.assertStrContains(out, "ffi\ttrue\n", false, where)
    lu.assertStrContains(out, "bytes\txbc=\n")
  end)
end

function TestEmbedded.test_tune_without_lua_files()
  run_without_lua_files([[
    local avxbuf = require "avxbuf"
    local settings, report, options = avxbuf.tune(0.05)
    print("types", type(settings), type(report), type(options))
    print("same", require("avxbuf.tune") ~= nil)
  ]], function(out, where)
    lu.assertStrContains(out, "types\ttable\ttable\tstring\n", false, where)
    lu.assertStrContains(out, "same\ttrue\n")
  end)
end

-- Each call on its own line; the error must start with this chunk's name
-- and that line. Under LuaJIT copy, zero, fill, put and resize are the FFI
-- path's; everything else is C (tune: the compiled-in Lua, called from C).
local CALLS = {
  { "put", "b:put({})", "bad argument #1 to 'put' (string, number or avxbuf.buffer expected, got table)" },
  { "put", "b:put('x', true)", "bad argument #2 to 'put'" },
  { "copy", "b:copy(100, 'x')", "bad argument #1 to 'copy'" },
  { "copy", "avxbuf.copy(b, 1, 5)", "bad argument #3 to 'copy'" },
  { "fill", "b:fill(256)", "bad argument #1 to 'fill'" },
  { "zero", "b:zero(1, 99)", "bad argument #2 to 'zero'" },
  { "resize", "b:resize(-1)", "bad argument #1 to 'resize'" },
  { "pack", "b:pack(0, 'b', 1)", "bad argument #1 to 'pack'" },
  { "pack", "b:pack('i4', 'x')", "bad argument #2 to 'pack'" },
  { "putf", "b:putf(5)", "bad argument #1 to 'putf'" },
  { "putf", "b:putf('%d', {})", "bad argument #2 to 'putf'" },
  { "reserve", "b:reserve(-1)", "bad argument #1 to 'reserve'" },
  { "split", "b:split('')", "bad argument #1 to 'split' (empty separator)" },
  { "lines", "b:lines('x')", "bad argument #1 to 'lines'" },
  { "read", "b:read(io.stdin, 1, 0)", "bad argument #3 to 'read'" },
  { "tune", "avxbuf.tune(-1)", "bad argument #1 to 'tune'" },
}

function TestEmbedded.test_errors_name_the_callers_line()
  local code = { "local avxbuf = require 'avxbuf'", "local b = avxbuf.from('abcd')" }
  local first = #code + 1
  for _, c in ipairs(CALLS) do
    code[#code + 1] = string.format("print((select(2, pcall(function() local r = %s; return r end))))", c[2])
  end
  local out, status, file = run(table.concat(code, "\n") .. "\n", NOWHERE)
  lu.assertEquals(status, 0, out)
  local lines = {}
  for line in out:gmatch("[^\n]*") do if line ~= "" then lines[#lines + 1] = line end end
  lu.assertEquals(#lines, #CALLS, out)
  for k, c in ipairs(CALLS) do
    local want = string.format("%s:%d: %s", file, first + k - 1, c[3])
    lu.assertEquals(lines[k]:sub(1, #want), want, c[2])
  end
end

-- The FFI path compiled by the JIT raises the same errors from the same
-- place as the interpreter does.
function TestEmbedded.test_ffi_errors_from_compiled_code()
  if not jit then lu.skip("the FFI path is LuaJIT's") end
  local out, status, file = run([[
    local avxbuf = require "avxbuf"
    local b = avxbuf.new(8)
    local seen = {}
    for i = 1, 300 do
      local v = i < 250 and "ab" or {}
      local ok, err = pcall(function()
        b:put(v)
      end)
      if not ok then seen[err] = true end
      b:resize(4)
    end
    for err in pairs(seen) do print(err) end
  ]], NOWHERE)
  lu.assertEquals(status, 0, out)
  lu.assertEquals(out, string.format("%s:7: bad argument #1 to 'put' (string, number or avxbuf.buffer expected, "
                                     .. "got table)\n", file))
end
