-- avxbuf.counters: names, honest unavailability, a software event that counts.
local lu = require "luaunit"
local counters = require "avxbuf.counters"
local events = require "avxbuf.events"
local avxbuf = require "avxbuf"
local h = require "helpers"

TestCounters = {}

function TestCounters.test_unknown_event_is_an_error_listing_the_known_ones()
  local ok, err = pcall(counters.open, { "task-clock", "no-such-event" })
  lu.assertFalse(ok)
  lu.assertStrContains(err, "unknown event 'no-such-event'")
  for _, name in ipairs { "cycles", "ref-cycles", "task-clock", "core_power.lvl1_turbo_license",
                          "core_power.throttle", "rXXXX" } do
    lu.assertStrContains(err, name)
  end
end

function TestCounters.test_software_event_really_counts()
  if h.QEMU then lu.skip("qemu-user does not emulate perf_event_open") end
  local g = counters.open { "task-clock" }
  local c0 = os.clock()
  g:start()
  local x = 0
  for i = 1, 2e6 do x = x + i % 7 end
  local r = g:stop()
  local cpu_seconds = os.clock() - c0
  g:close()
  local v = r.events["task-clock"].value
  lu.assertNotNil(v, r.events["task-clock"].unavailable)
  -- task-clock is this thread's CPU time in ns; os.clock (C's clock()) the
  -- process's, which here is one thread: the two agree, up to the calls
  -- around the loop and clock()'s tick
  lu.assertTrue(v / 1e9 > 0.5 * cpu_seconds - 0.005 and v / 1e9 < 1.5 * cpu_seconds + 0.005,
                string.format("task-clock counted %s ns where os.clock saw %.6f s", tostring(v), cpu_seconds))
  lu.assertTrue(r.time_enabled > 0 and r.time_running > 0)
  lu.assertEquals(type(r.multiplexed), "boolean")
  -- after close, a group reads nothing and says so
  lu.assertEquals(g:stop().events["task-clock"], { unavailable = "the group was closed" })
end

function TestCounters.test_unavailable_events_say_why_and_never_count_zero()
  local hw = { "cycles", "instructions", "ref-cycles", "r00c0" }
  local g = counters.open(hw)
  g:start()
  local r = g:stop()
  g:close()
  local ok, why = counters.available()
  for _, name in ipairs(hw) do
    local e = r.events[name]
    if ok then
      lu.assertNotNil(e.value, name)
    else
      -- This CI machine: a VM with no core PMU.
      lu.assertNil(e.value, name .. " must not be reported as a number")
      lu.assertNotNil(e.unavailable:match(".+%(E%u+%)$"), name .. ": " .. e.unavailable)
    end
  end
  if not ok then lu.assertNotNil(why:match(".+%(E%u+%)$"), why) end
end

function TestCounters.test_licence_events_follow_the_cpu()
  local cpu = avxbuf.cpu()
  local t, cfg = events.resolve("core_power.lvl1_turbo_license", cpu)
  if cpu.licence_events then
    lu.assertEquals({ t, cfg }, { 4, 0x1828 })
  else
    lu.assertNil(t)
    lu.assertStrContains(cfg, "not an event of this CPU")
  end
  -- The same names on a Cascade Lake and an AMD Zen 3, as decide() sees them.
  local clx = avxbuf.decide { vendor = "GenuineIntel", leaf1_eax = 0x00050657 }
  lu.assertEquals({ events.resolve("core_power.throttle", clx) }, { 4, 0x4028 })
  lu.assertEquals({ events.resolve("core_power.lvl2_turbo_license", clx) }, { 4, 0x2028 })
  local icl = avxbuf.decide { vendor = "GenuineIntel", leaf1_eax = 0x000706E5 }
  lu.assertEquals({ events.resolve("core_power.lvl0_turbo_license", icl) }, { 4, 0x0728 })
  lu.assertNil((events.resolve("core_power.throttle", icl)))
  -- Cannon Lake: AVX-512 lowers its licence too, but no event list is published
  local cnl = avxbuf.decide { vendor = "GenuineIntel", leaf1_eax = 0x00060663 }
  lu.assertEquals(cnl.rule, "licence-mild")
  lu.assertNil((events.resolve("core_power.lvl0_turbo_license", cnl)))
  local zen = avxbuf.decide { vendor = "AuthenticAMD", leaf1_eax = 0x00A00F11 }
  lu.assertNil((events.resolve("core_power.lvl1_turbo_license", zen)))
  lu.assertEquals({ events.resolve("r1828", zen) }, { 4, 0x1828 })
end

-- pin() binds this thread to one CPU: to one the process may use (under
-- taskset or a cpuset, CPU 0 may not be one), then back to all it had, with
-- taskset (pin takes one CPU), or the rest of the suite would run on one. A
-- CPU past the highest the kernel could bring online is refused on any
-- machine.
local function cpu_outside()
  local f = io.open("/sys/devices/system/cpu/possible")   -- e.g. "0-1"
  local highest = f and tonumber(f:read("*a"):match("(%d+)%s*$"))
  if f then f:close() end
  return highest and math.min(highest + 1, 1023) or 1023   -- 1023: pin's limit
end

function TestCounters.test_pin_and_readings()
  local allowed = counters.cpus()
  lu.assertTrue(#allowed > 0, "sched_getaffinity gave no CPU")
  local ok, err = counters.pin(allowed[#allowed])
  local pinned = counters.cpus()
  -- the shell's parent is this process: -p sets its main thread, which pin set
  local out, status = h.shell("taskset -p -c " .. table.concat(allowed, ",") .. " $PPID")
  lu.assertTrue(ok, err)
  lu.assertEquals(pinned, { allowed[#allowed] })
  lu.assertEquals(status, 0, out)
  lu.assertEquals(counters.cpus(), allowed, "the CPUs the process had, restored")
  local outside = cpu_outside()
  for _, c in ipairs(allowed) do lu.assertNotEquals(c, outside) end
  ok, err = counters.pin(outside)
  lu.assertNil(ok)
  lu.assertStrContains(err, "sched_setaffinity(" .. outside .. "): ")
  lu.assertStrContains(err, "(EINVAL)")
  lu.assertEquals(counters.cpus(), allowed, "a refused pin changes nothing")
end

-- counters.clock() is CLOCK_MONOTONIC in seconds: across a child's
-- `sleep 0.2` it moves by at least 0.2 (and not by a unit's factor more).
function TestCounters.test_clock_counts_seconds()
  h.needs_children()
  local t0 = counters.clock()
  local out, status = h.shell("sleep 0.2")
  local dt = counters.clock() - t0
  lu.assertEquals(status, 0, out)
  lu.assertTrue(dt >= 0.2 and dt < 20, "clock() moved by " .. dt .. " across sleep 0.2")
end

-- msr()'s reason is the one the OS gives another reader of the same device:
-- io.open, then a read at the register's offset.
function TestCounters.test_msr_reason_is_the_os_reason()
  local path = "/dev/cpu/0/msr"
  local v, why = counters.msr(0, 0xE8)
  local f, reason = io.open(path, "rb")
  if f then
    local ok, err = f:seek("set", 0xE8)
    if ok then ok, err = f:read(8) end
    f:close()
    if ok then
      lu.assertNotNil(v, why)
      return
    end
    reason = tostring(err)
  else
    reason = reason:sub(#path + 3)   -- io.open says "PATH: REASON"
  end
  lu.assertNil(v)
  local expected = path .. " register 0xE8: " .. reason .. " (E"
  lu.assertEquals(why:sub(1, #expected), expected)
end

-- Names that only the list's __index produces, and a resolve that drops
-- them and collects garbage: the group must keep its own copies (before,
-- add_event read freed memory: valgrind and ASan said so).
function TestCounters.test_names_outlive_what_resolve_does_with_them()
  if _VERSION == "Lua 5.1" then lu.skip("Lua 5.1's length operator ignores __len") end
  local long = ("x"):rep(80)
  local list = setmetatable({}, {
    __index = function(_, i) if i <= 3 then return long .. "-" .. i end end,
    __len = function() return 3 end,
  })
  local saved = events.resolve
  events.resolve = function(name)
    local _ = name
    name = nil  -- luacheck: ignore
    collectgarbage("collect")
    return nil, "resolved away"
  end
  local ok, g = pcall(counters.open, list)
  events.resolve = saved
  lu.assertTrue(ok, g)
  local r = g:stop()
  local keys = {}
  for k, v in pairs(r.events) do keys[#keys + 1] = k; lu.assertEquals(v.unavailable, "resolved away") end
  table.sort(keys)
  lu.assertEquals(keys, { long .. "-1", long .. "-2", long .. "-3" })
end

function TestCounters.test_long_names_stay_apart_and_repeats_open_once()
  if h.QEMU then lu.skip("qemu-user does not emulate perf_event_open") end
  local a = "r" .. ("0"):rep(70) .. "0728"
  local b = "r" .. ("0"):rep(70) .. "1828"
  local g = counters.open { a, b, "task-clock", "task-clock" }
  local r = g:stop()
  g:close()
  lu.assertNotNil(r.events[a])
  lu.assertNotNil(r.events[b])
  local n = 0
  for _ in pairs(r.events) do n = n + 1 end
  lu.assertEquals(n, 3, "a name given twice is one event")
end

function TestCounters.test_bad_names_name_the_argument()
  for _, list in ipairs { { "task-clock", 5 }, { true }, { "task-clock", {} } } do
    local ok, err = pcall(counters.open, list)
    lu.assertFalse(ok)
    lu.assertStrContains(err, "bad argument #1 to ")
    lu.assertStrContains(err, "is a ")
  end
end

-- A counter's descriptor must not be inherited by child processes.
function TestCounters.test_descriptors_are_close_on_exec()
  if h.QEMU or h.NO_CHILDREN then lu.skip("needs perf_event_open and child processes") end
  local g = counters.open { "task-clock" }
  local out = io.popen("ls -l /proc/self/fd/ 2>&1"):read("*a")
  g:close()
  lu.assertNotStrContains(out, "perf_event")
end

function TestCounters.test_msr_checks_its_numbers()
  for _, args in ipairs { { -1, 0xE8 }, { 2 ^ 32, 0xE8 }, { 0, -1 }, { 0, 2 ^ 33 } } do
    lu.assertFalse(pcall(counters.msr, args[1], args[2]))
  end
end

-- The collector-torture build (make test-gc) wraps counters' Lua API calls
-- as it does the binding's (src/lua/luaapi.h): one open that fails on its first
-- name has collected, by then, what was garbage before it.
function TestCounters.test_torture_build_collects_in_counters_too()
  if not h.TORTURE then lu.skip("the collector-torture build only") end
  collectgarbage()
  local weak = setmetatable({}, { __mode = "k" })
  weak[{}] = true
  lu.assertFalse((pcall(counters.open, { true })))
  lu.assertNil(next(weak), "no collection ran inside counters.open")
end
