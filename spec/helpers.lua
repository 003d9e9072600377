-- Shared by the specs: the module under test, reference data, and the list
-- of kernel configurations this build can run.
local avxbuf = require "avxbuf"
local M = { avxbuf = avxbuf }

-- Under valgrind (make valgrind) the same specs run with fewer sizes and
-- offsets, and skip what compares this process with the machine outside:
-- valgrind emulates CPUID, so its CPU is not the one a child process sees.
M.LIGHT = os.getenv("AVXBUF_SPEC_LIGHT") ~= nil
M.EMULATED_CPUID = os.getenv("AVXBUF_SPEC_VALGRIND") ~= nil
-- Under qemu-user (make test-aarch64) child processes would be host
-- binaries, and perf_event_open is not emulated.
M.NO_CHILDREN = os.getenv("AVXBUF_SPEC_NO_CHILDREN") ~= nil
M.QEMU = os.getenv("AVXBUF_SPEC_QEMU") ~= nil
M.X86 = avxbuf.cpu().x86

-- Whether this is the collector-torture build (make test-gc), which runs a
-- full collection at every point where the binding may allocate: its specs
-- take fewer cases. (A new buffer is such a point; anywhere else one call
-- does not finish a cycle.)
local function torture_build()
  collectgarbage()
  for _ = 1, 3 do
    local weak = setmetatable({}, { __mode = "k" })
    weak[{}] = true
    avxbuf.new(0)
    if next(weak) ~= nil then return false end
  end
  return true
end
M.TORTURE = torture_build()

function M.needs_children()
  if M.NO_CHILDREN then require("luaunit").skip("starts child processes (not under qemu-user)") end
end

function M.needs_x86()
  if not M.X86 then require("luaunit").skip("x86 kernels and knobs (this is " .. avxbuf.cpu().arch .. ")") end
end

-- Portable across Lua 5.1-5.4 and LuaJIT (the suite runs on each).
M.unpack = table.unpack or unpack
M.MAXINT = math.maxinteger or 2 ^ 53
M.MININT = math.mininteger or -2 ^ 53

-- x with bit b set / cleared, without bitwise operators.
function M.bit_is_set(x, b) return math.floor(x / 2 ^ b) % 2 == 1 end
function M.set_bit(x, b) return M.bit_is_set(x, b) and x or x + 2 ^ b end
function M.clear_bit(x, b) return M.bit_is_set(x, b) and x - 2 ^ b or x end

-- The suite's seeded generator (bench/lib/rng.lua, shared with bench/):
-- M.rng(seed) gives r, where r(n) is an integer in [0, n).
local rng = require "rng"
M.rng, M.random_bytes = rng.new, rng.bytes

-- Deterministic normal deviates (the generator above and Box-Muller),
-- independent of the code under test: M.normals(seed) gives z, z() one deviate.
function M.normals(seed)
  local r = rng.new(seed)
  local function u() return (r(2147483648) + 0.5) / 2147483648 end
  return function() return math.sqrt(-2 * math.log(u())) * math.cos(2 * math.pi * u()) end
end

-- Deterministic pseudo-random bytes, independent of avxbuf.
function M.pattern(n, seed)
  return rng.bytes(rng.new((seed or 1) * 7919), n)
end

-- A long pattern without a power-of-two period, so misplaced bytes show.
function M.long_pattern(n, seed)
  local chunk = M.pattern(4099, seed)
  return (chunk:rep(math.floor(n / #chunk) + 1)):sub(1, n)
end

-- Where two equal-length strings first differ, for failure messages.
function M.first_difference(a, b)
  if #a ~= #b then return string.format("lengths %d and %d", #a, #b) end
  for i = 1, #a do
    if a:byte(i) ~= b:byte(i) then
      return string.format("byte %d: got %d, expected %d", i, a:byte(i), b:byte(i))
    end
  end
end

function M.assert_bytes(actual, expected, what)
  if actual ~= expected then
    error(string.format("%s: %s", what, M.first_difference(actual, expected)), 2)
  end
end

-- Every kernel this build can run (see bench/lib/kernel_list.lua).
function M.kernel_configs()
  return require("kernel_list").list(avxbuf)
end

-- The kernel names avxbuf.kernel() should give, from avxbuf.kernels() (see
-- bench/lib/kernel_list.lua): a vector family's, and a string instruction's.
function M.family(level, bytes, role) return require("kernel_list").family(avxbuf, level, bytes, role) end
function M.string_kernel(op) return require("kernel_list").string_kernel(avxbuf, op) end

-- The address of a buffer's data (buf:ref() gives it as a light userdata).
function M.address(buf)
  return tonumber(tostring((buf:ref())):match("0x(%x+)"), 16)
end

function M.use(knobs)
  avxbuf.reset()
  return avxbuf.configure(knobs)
end

-- A finalizer that runs f once, at the (delay + 1)th collection from now
-- (each collection that finds it makes the next one), while its handle is
-- live; handle.ran says whether it has. Setting handle.live = false
-- allocates nothing: a test ends the window with it. With every
-- allocation (or, in the torture build, every point) a collection, delays
-- 0, 1, 2, ... fire it at each point of an operation in turn. (Lua 5.1 and
-- LuaJIT finalize userdata only: newproxy makes one.)
function M.arm(f, delay)
  local handle = { live = true, ran = false }
  local function make(k)
    local function gc()
      if not handle.live then return end
      if k > 0 then make(k - 1) else handle.ran = true; f() end
    end
    if newproxy then
      getmetatable(newproxy(true)).__gc = gc
    else
      setmetatable({}, { __gc = gc })
    end
  end
  make(delay or 0)
  return handle
end

-- Runs body with a collection after every allocation, as far as each Lua
-- lets a program ask, then a full one, so that no finalizer armed in body
-- fires in a later test.
function M.aggressive(body)
  local ok, err
  if _VERSION == "Lua 5.4" then
    collectgarbage("incremental", 1, 1000)
    ok, err = pcall(body)
    collectgarbage("incremental", 200, 100, 13)
  else
    -- pause 0: every allocation steps; step multiplier 0: a step is a
    -- whole cycle, finalizers included (lgc.c / lj_gc.c)
    local pause, stepmul = collectgarbage("setpause", 0), collectgarbage("setstepmul", 0)
    ok, err = pcall(body)
    collectgarbage("setpause", pause)
    collectgarbage("setstepmul", stepmul)
  end
  collectgarbage()
  if not ok then error(err, 0) end
end

-- POSIX shell quoting: anything inside single quotes is literal.
-- body() run as every mode the Lua has: on LuaJIT interpreted (jit.off())
-- and then compiled, elsewhere once.
function M.each_jit_mode(body)
  if rawget(_G, "jit") then
    jit.off()
    local ok, err = pcall(body, "interpreted")
    jit.on()
    if not ok then error(err, 0) end
    return body("compiled")
  end
  return body("plain")
end

function M.sh(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

-- Runs a shell command; returns stdout and stderr joined, and the exit status.
function M.shell(cmd)
  local out = io.popen(cmd .. " 2>&1; echo \"exit $?\""):read("*a")
  local status = tonumber(out:match("exit (%d+)\n$"))
  return (out:gsub("exit %d+\n$", "")), status
end

-- Runs `INTERPRETER -e code` (this one unless given) with the same flavour
-- (unless env sets LUA_CPATH) and environment additions.
function M.run_child(env, code, interpreter)
  local prefix = { "LUA_CPATH=" .. M.sh(package.cpath:match("^[^;]*") .. ";;") }
  for k, v in pairs(env) do prefix[#prefix + 1] = k .. "=" .. M.sh(v) end
  return M.shell(string.format("%s %s -e %s", table.concat(prefix, " "),
                                  M.sh(interpreter or arg[-1] or "lua5.4"), M.sh(code)))
end

return M
