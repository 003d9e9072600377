-- Neovim's part of `make test-hosts`, once after an init.lua that puts
-- avxbuf.so's directory on package.cpath, once with it in a runtimepath
-- directory's lua/:
--   nvim --headless -u init.lua -c "luafile spec/hosts/nvim.lua"
-- writes its report to AVXBUF_HOSTS_OUT; quits with status 1 on a failure.
-- luacheck: read globals vim
local function run()
  package.path = "spec/hosts/?.lua;" .. package.path
  local avxbuf = require "avxbuf"
  local page, expected = require "page", require "expected"
  for n = 0, 199 do assert(page.render(n) == expected.page(n), "page " .. n) end
  -- A Neovim buffer's lines into an avxbuf buffer and back.
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "alpha", "beta", "" })
  local b = avxbuf.new()
  for _, line in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do b:put(line, "\n") end
  assert(tostring(b) == "alpha\nbeta\n\n", tostring(b))
  assert(select(2, b:find("beta", 1, true)) == 10)
  local v = vim.version()
  return string.format("nvim %d.%d.%d, %s: 200 pages equal, buffer lines ok, ffi=%s, AVXBUF_OPTIONS=%s, use_avx=%d",
    v.major, v.minor, v.patch, jit.version, tostring(avxbuf.ffi), tostring(os.getenv("AVXBUF_OPTIONS")),
    avxbuf.config().use_avx)
end

local ok, msg = pcall(run)
local out = assert(io.open(os.getenv("AVXBUF_HOSTS_OUT"), "w"))
out:write(ok and "ok " or "FAILED ", tostring(msg), "\n")
out:close()
vim.cmd(ok and "qall!" or "cquit 1")
