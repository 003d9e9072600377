-- The release rockspec is made from the scm one (`make release-rockspec`);
-- this checks that their builds and dependencies have not drifted apart,
-- and that the module's sources are the Makefile's list (SRC).
--   lua5.4 tools/same_rockspecs.lua avxbuf-scm-1.rockspec avxbuf-X.Y.Z-1.rockspec [SOURCE.c...]
local function load_spec(path)
  local env = {}
  assert(loadfile(path, "t", env))()
  return env
end

local function same(a, b, where)
  if type(a) ~= type(b) then return false, where end
  if type(a) ~= "table" then return a == b, where end
  for k, v in pairs(a) do
    local ok, at = same(v, b[k], where .. "." .. tostring(k))
    if not ok then return false, at end
  end
  for k in pairs(b) do
    if a[k] == nil then return false, where .. "." .. tostring(k) end
  end
  return true
end

local scm, release = load_spec(arg[1]), load_spec(arg[2])
for _, field in ipairs { "build", "dependencies", "description", "test", "rockspec_format", "package" } do
  local ok, at = same(scm[field], release[field], field)
  if not ok then
    io.stderr:write(string.format("%s and %s differ at %s: run make release-rockspec\n", arg[1], arg[2], at))
    os.exit(1)
  end
end
local listed, rock = {}, {}
for i = 3, #arg do listed[arg[i]] = true end
for _, f in ipairs(scm.build.modules.avxbuf.sources) do rock[f] = true end
for _, pair in ipairs { { listed, rock, "the Makefile's SRC but not " .. arg[1] },
                        { rock, listed, arg[1] .. " but not the Makefile's SRC" } } do
  for f in pairs(pair[1]) do
    if #arg > 2 and not pair[2][f] then
      io.stderr:write(string.format("%s is in %s\n", f, pair[3]))
      os.exit(1)
    end
  end
end
print(string.format("%s matches %s (build, dependencies, description)%s", arg[2], arg[1],
                    #arg > 2 and string.format("; both build the Makefile's %d sources", #arg - 2) or ""))
