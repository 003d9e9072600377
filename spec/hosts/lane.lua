-- One lane of `make test-hosts`'s load: COUNT requests of /rows?n=... in a
-- fixed order, as a curl config (one connection, kept alive), and the bytes
-- the lane must receive, made by spec/hosts/expected.lua.
--   lua5.4 spec/hosts/lane.lua urls BASE_URL LANE COUNT > lane.curl
--   lua5.4 spec/hosts/lane.lua expected LANE COUNT > lane.expected
local expected = dofile(arg[0]:gsub("[^/]*$", "") .. "expected.lua")

local what = arg[1]
local function order(lane, count)
  local k = 0
  return function()
    k = k + 1
    if k <= count then return (k * 7 + lane) % 200 end
  end
end

if what == "urls" then
  for n in order(tonumber(arg[3]), tonumber(arg[4])) do
    io.write(string.format('url = "%s/rows?n=%d"\n', arg[2], n))
  end
elseif what == "expected" then
  for n in order(tonumber(arg[2]), tonumber(arg[3])) do io.write(expected.page(n)) end
else
  io.stderr:write("usage: lane.lua urls BASE_URL LANE COUNT | expected LANE COUNT\n")
  os.exit(2)
end
