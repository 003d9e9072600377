-- nginx's handlers in `make test-hosts` (tools/hosts/run.sh writes the
-- nginx.conf that calls them from content_by_lua_block).
-- luacheck: read globals ngx
local avxbuf = require "avxbuf"
local page = require "page"

local M = {}

function M.rows()
  ngx.print(page.render(tonumber(ngx.var.arg_n) or 0))
end

-- What docs/hosts.md says of nginx, as this worker sees it.
function M.info()
  local ok, err = pcall(ngx.print, avxbuf.new())
  ngx.print(table.concat({
    "pid=" .. ngx.worker.pid(),
    "options=" .. tostring(os.getenv("AVXBUF_OPTIONS")),
    "use_avx=" .. avxbuf.config().use_avx,
    "jit=" .. jit.version,
    "openresty_luajit=" .. tostring(pcall(require, "table.isarray")),
    "ffi=" .. tostring(avxbuf.ffi),
    "print_buffer=" .. (ok and "accepted" or err),
    "print_tostring=" .. tostring((pcall(ngx.print, tostring(avxbuf.from(""))))),
  }, "\n"), "\n")
end

return M
