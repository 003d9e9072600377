-- HAProxy's services in `make test-hosts` (tools/hosts/run.sh writes the
-- haproxy.cfg that loads this file with lua-load-per-thread).
-- luacheck: read globals core
local avxbuf = require "avxbuf"
local page = require "page"

core.register_service("rows", "http", function(applet)
  local body = page.render(tonumber(applet.qs:match("n=(%d+)")) or 0)
  applet:set_status(200)
  applet:add_header("content-length", tostring(#body))
  applet:start_response()
  applet:send(body)
end)

-- docs/hosts.md's example, as it is there.
core.register_service("hello", "http", function(applet)
  local body = tostring(avxbuf.new():put("hello ", 42, "\n"))
  applet:set_status(200)
  applet:add_header("content-length", tostring(#body))
  applet:start_response()
  applet:send(body)
end)

-- What docs/hosts.md says of HAProxy, as this thread's Lua state sees it.
core.register_service("info", "http", function(applet)
  applet:set_status(200)
  applet:start_response()
  local ok, err = pcall(applet.send, applet, avxbuf.new())
  applet:send(table.concat({
    "thread=" .. tostring(core.thread),
    "state=" .. tostring(package.loaded.avxbuf):match("0x%x+"),
    "options=" .. tostring(os.getenv("AVXBUF_OPTIONS")),
    "use_avx=" .. avxbuf.config().use_avx,
    "lua=" .. _VERSION,
    "send_buffer=" .. (ok and "accepted" or err),
  }, "\n") .. "\n")
end)
