-- The release rockspec is made from the scm one (`make release-rockspec`);
-- this checks that their builds and dependencies have not drifted apart.
--   lua5.4 tools/same_rockspecs.lua avxbuf-scm-1.rockspec avxbuf-X.Y.Z-1.rockspec
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
print(string.format("%s matches %s (build, dependencies, description)", arg[2], arg[1]))
