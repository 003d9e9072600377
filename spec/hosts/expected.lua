-- spec/hosts/page.lua's bytes from the string library alone, without
-- string.pack (LuaJIT, wrk's Lua, has none): what every response must be.
local M = {}

function M.page(n)
  local rows = { "n=" .. n .. "\n" }
  for i = 1, n do
    rows[#rows + 1] = string.format("%4d %04x ", i, i * 40503 % 65536)
      .. string.rep(string.char(97 + i % 26), i % 17) .. "\n"
  end
  local half = table.concat(rows)
  local le = {}
  for k = 0, 3 do le[k + 1] = math.floor(n / 256 ^ k) % 256 end
  return half .. half .. string.char(le[1], le[2], le[3], le[4])
end

return M
