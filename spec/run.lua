-- Test runner: lua5.4 spec/run.lua DIR[@PROGRAM] [DIR ...]
-- Each DIR holds one flavour of avxbuf.so (build = native, build/emul =
-- emulated AVX-512), or, with @PROGRAM, the program to run the suite in
-- instead of this interpreter (build/static@build/static/host: avxbuf linked
-- into an embedding host; child processes are then not started). Each
-- flavour runs in its own process; the last line is the total "N passed, N
-- failed", and the exit status is non-zero on any failure or error, or when
-- no test ran at all.
local lua = arg[-1] or "lua5.4"
local child_dir = os.getenv("AVXBUF_SPEC_DIR")

if child_dir then
  package.path = "lua/?.lua;lua/?/init.lua;spec/?.lua;bench/lib/?.lua;" .. package.path
  package.cpath = child_dir .. "/?.so;" .. package.cpath
  local lu = require "luaunit"
  local specs = {}
  for name in io.popen("ls spec/*_spec.lua"):lines() do specs[#specs + 1] = name end
  for _, file in ipairs(specs) do dofile(file) end
  local runner = lu.LuaUnit.new()
  runner:setOutputType("text")
  -- Each test's name goes to AVXBUF_SPEC_MARK as it starts (luaunit's
  -- startTest), so that the parent can name the test a process that dies
  -- (a signal: no result line) was in. The tests themselves are left as
  -- they are: one turns the JIT off for itself by its own name.
  local mark = os.getenv("AVXBUF_SPEC_MARK")
  if mark then
    local start = runner.startTest
    function runner.startTest(self, name)
      local out = io.open(mark, "w")
      if out then out:write(name); out:close() end
      return start(self, name)
    end
  end
  runner:runSuite((table.unpack or unpack)(arg))
  local r = runner.result
  print(string.format("%s: %d passed, %d failed", child_dir, r.successCount,
                      r.failureCount + r.errorCount))
  os.exit(r.notSuccessCount == 0 and r.successCount > 0 and 0 or 1)
end

if #arg == 0 then
  io.stderr:write("usage: lua5.4 spec/run.lua DIR [DIR ...] [-- luaunit options]\n")
  os.exit(2)
end

local dirs, extra = {}, {}
for i = 1, #arg do
  if arg[i] == "--" then
    for j = i + 1, #arg do extra[#extra + 1] = arg[j] end
    break
  end
  dirs[#dirs + 1] = arg[i]
end

-- The flavours run two at a time (AVXBUF_SPEC_JOBS), each in its own
-- process, as the CI machine has two cores and every suite is one thread;
-- each one's output is printed whole, in the order given. (valgrind's and
-- the collector-torture targets ran two flavours at once before this did.)
local jobs = math.max(1, tonumber(os.getenv("AVXBUF_SPEC_JOBS")) or 2)
local runs = {}
local function start(k)
  local dir, program = dirs[k]:match("^(.-)@(.+)$")
  dir = dir or dirs[k]
  local mark = os.tmpname()
  local cmd = string.format("AVXBUF_SPEC_DIR=%q AVXBUF_SPEC_MARK=%q %s%q spec/run.lua %s 2>&1; echo \"exit $?\"",
                            dir, mark, program and "AVXBUF_SPEC_NO_CHILDREN=1 " or "", program or lua,
                            table.concat(extra, " "))
  runs[k] = { dir = dir, mark = mark, pipe = io.popen(cmd) }
end
for k = 1, math.min(jobs, #dirs) do start(k) end

local passed, failed, all_ok = 0, 0, true
for k = 1, #dirs do
  local dir, pipe = runs[k].dir, runs[k].pipe
  local p, f, status = nil, nil, nil
  for line in pipe:lines() do
    local dp, df = line:match("^" .. dir:gsub("%p", "%%%0") .. ": (%d+) passed, (%d+) failed$")
    if dp then p, f = tonumber(dp), tonumber(df) end
    local s = line:match("^exit (%d+)$")
    if s then status = tonumber(s) else print(line) end
  end
  pipe:close()
  if k + jobs <= #dirs then start(k + jobs) end
  local file = io.open(runs[k].mark)
  local last = file and file:read("*a") or ""
  if file then file:close() end
  os.remove(runs[k].mark)
  if not p then
    -- a status past 128 is a signal's (the shell's 128 + N: 139 is SIGSEGV)
    print(string.format("%s: no result (the suite crashed or ran no test; exit status %s%s)", dir,
                        tostring(status), last ~= "" and ", in " .. last or ""))
    all_ok, failed = false, failed + 1
  else
    passed, failed = passed + p, failed + f
    if status ~= 0 or p == 0 then all_ok = false end
  end
end
print(string.format("%d passed, %d failed", passed, failed))
os.exit(all_ok and failed == 0 and passed > 0 and 0 or 1)
