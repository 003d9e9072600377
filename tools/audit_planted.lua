-- The audit's own test: tools/audit_planted.c plants one violation of each
-- kind (and a few clean functions) in an object named like avxbuf's
-- kernels; the audit must report exactly the violations its EXPECT lines
-- list.   lua5.4 tools/audit_planted.lua [BUILD]   (BUILD holds avxbuf.so)
local build = arg[1] or "build"
local lua = arg[-1] or "lua5.4"
local source = "tools/audit_planted.c"
local object = build .. "/audit-planted.so"

local function sh(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function run(cmd)
  local p = assert(io.popen(cmd .. " 2>&1"))
  local out = p:read("a")
  return out, p:close()
end

local out, ok = run(string.format("%s -shared -fPIC -o %s %s", os.getenv("CC") or "cc", sh(object), sh(source)))
if not ok then io.stderr:write("cannot build the planted object:\n", out); os.exit(1) end

local expected, missing = {}, {}
for fn, rule in assert(io.open(source)):read("a"):gmatch("EXPECT (%S+) (%a+):") do
  expected[fn .. " " .. rule] = true
  missing[fn .. " " .. rule] = true
end

local so = build .. "/avxbuf.so"
out = run(string.format("%s tools/audit.lua --label planted --kernels-from %s --select %s %s",
                        sh(lua), sh(so), sh(so), sh(object)))
local unexpected, found = {}, 0
for fn, rule in out:gmatch("[^\n]-: (%S+) at %S+: (%a+):[^\n]*") do
  local key = fn .. " " .. rule
  if expected[key] then
    if missing[key] then found = found + 1 end
    missing[key] = nil
  else
    unexpected[#unexpected + 1] = key
  end
end
local n_missing = 0
for key in pairs(missing) do print("planted violation not reported: " .. key); n_missing = n_missing + 1 end
for _, key in ipairs(unexpected) do print("reported but not planted: " .. key) end
if found == 0 then print(out) end
print(string.format("audit planted: %d planted violations reported, %d missed, %d reported in clean code",
                    found, n_missing, #unexpected))
os.exit(found > 0 and n_missing == 0 and #unexpected == 0 and 0 or 1)
