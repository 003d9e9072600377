-- LuaJIT: avxbuf.copy, zero and fill, and buf:put, through the FFI, so that
-- the JIT compiles the argument checks, the kernel pick and the call. The
-- checks are the C functions' own; whatever this fast path does not handle
-- plainly (a wrong type, an index out of range, a numeric string, a buffer
-- that must grow) goes to the C function, which does the work or raises the
-- documented error. Loaded by the C module under LuaJIT only (src/lluajit.c).
--
-- Operations of up to 64 bytes that the C side would give a vector kernel
-- are moved here, as two ffi.copy/ffi.fill of a constant width, which the
-- JIT compiles to plain loads and stores: a call into a kernel costs more
-- than such a move. avxbuf.kernel() says "ffi" for them, avxbuf.kernels()
-- lists it, and spec/jit_spec.lua reads the traces (no vector register
-- wider than xmm, no streaming store, no call).
local ffi = require "ffi"

-- The layouts of src/lavxbuf.h (the first fields of a buffer),
-- src/kernels/kernels.h (avxbuf_kernel) and src/dispatch.h (avxbuf_family,
-- avxbuf_plan); checked against avxbuf itself at load.
if not pcall(ffi.typeof, "avxbuf_buffer") then
  ffi.cdef [[
    typedef struct { uintptr_t cookie; int64_t len; unsigned char *data; int64_t cap; int32_t gen; } avxbuf_buffer;
    typedef void (*avxbuf_copy_fn)(void *dst, const void *src, size_t n);
    typedef void (*avxbuf_fill_fn)(void *dst, int byte, size_t n);
    typedef struct {
      const char *name;
      avxbuf_copy_fn copy;
      avxbuf_fill_fn fill;
    } avxbuf_kernel;
    typedef struct { const avxbuf_kernel *k, *k_nt; } avxbuf_family;
    typedef struct {
      avxbuf_family copy_narrow, copy_wide, fill_narrow, fill_wide;
      size_t wide_from, rep_movsb_from, rep_movsb_until, rep_stosb_from;
      size_t nontemporal_copy_from, nontemporal_fill_from;
      size_t copy_small_below, fill_small_below;
      const avxbuf_kernel *copy_small, *fill_small;
      avxbuf_copy_fn copy_small_fn;
      avxbuf_fill_fn fill_small_fn;
      int copy_inline_upto, fill_inline_upto;
    } avxbuf_plan;
  ]]
end

local bufp = ffi.typeof("avxbuf_buffer *")
local bytep = ffi.typeof("const unsigned char *")
local uptr = ffi.typeof("uintptr_t")
local cast, fcopy, ffill = ffi.cast, ffi.copy, ffi.fill
local type, tonumber, select, rawequal = type, tonumber, select, rawequal
-- The raw metatable: getmetatable also looks up __metatable, a hash lookup
-- the JIT repeated in every iteration of a put loop (-jdump).
local getmetatable_raw = debug.getmetatable
local OV_NONE, OV_FORWARD, OV_BACKWARD = 0, 1, 2
local EXACT = 2 ^ 52   -- integers up to this convert to int64_t exactly, sums of three too

-- The C function, with the error it raises as the caller would get it
-- from the C function itself: called from here it has no name, and the
-- numbers shift by one when the caller made a method call (as luaL_argerror
-- does), and the message gets the caller's position. Called from the
-- function the caller called (never as a tail call: levels count).
local function via_c(f, name, ...)
  local r = { pcall(f, ...) }
  if r[1] then return unpack(r, 2) end
  local how = debug.getinfo(2, "n")
  local method = how and how.namewhat == "method"
  local err = tostring(r[2]):gsub("^bad argument #(%d+) to '[^']*' %((.*)%)$", function(k, what)
    k = tonumber(k) - (method and 1 or 0)
    if k == 0 then return string.format("calling '%s' on bad self (%s)", name, what) end
    return string.format("bad argument #%d to '%s' (%s)", k, name, what)
  end)
  error(err, 3)
end

local function whole(x) return type(x) == "number" and x % 1 == 0 end

-- A move of n <= 64 bytes as two overlapping moves of a constant width (the
-- head/tail scheme of src/kernels/small.h): the JIT unrolls ffi.copy and
-- ffi.fill of a constant size into plain loads and stores, while a size it
-- cannot fold calls memcpy (-jdump: eight CALLS memcpy for an 8-piece put,
-- ~3 ns each). Each width has movers of their own, compiled from source
-- with the width a literal: a trace that starts anywhere in them, or in a
-- caller, sees a constant. (A width passed in, or an upvalue of closures
-- sharing one prototype, was a variable in traces that started inside
-- them or between the choice and the move, and those called memcpy:
-- spec/jit_spec.lua.)
local function width(n)
  return n >= 32 and 32 or n >= 16 and 16 or n >= 8 and 8 or n >= 4 and 4 or n >= 2 and 2 or n >= 1 and 1 or 0
end
local copy_width, fill_width = {}, {}
for _, w in ipairs { 0, 1, 2, 4, 8, 16, 32 } do
  copy_width[w], fill_width[w] = assert(load(([[
    local fcopy, ffill = ...
    return function(d, s, d2, s2) fcopy(d, s, W); fcopy(d2, s2, W) end,
           function(d, d2, byte) ffill(d, W, byte); ffill(d2, W, byte) end
  ]]):gsub("W", tostring(w)), "=avxbuf.ffi(width " .. w .. ")"))(fcopy, ffill)
end

-- No pointer or length survives an allocation (src/lavxbuf.h): run by the
-- interpreter, every cdata made here (a pointer, a boxed 64-bit length)
-- can run the collector, and a finalizer can free, resize or append to any
-- buffer. LuaJIT runs no finalizer on trace, but code runs interpreted
-- before it is compiled and after a trace exits. So every operation reads
-- the buffers' generation (a plain number: no allocation) first, makes
-- every cdata it needs, then checks that the generations are unchanged
-- right before its moves, with nothing that allocates in between; if not,
-- it leaves the work to the C function. Compiled, a check is a load and a
-- compare.
local function unchanged(a, ga, b, gb)
  return a.gen == ga and (not b or b.gen == gb)
end

local function inline_copy(d, s, n, a, ga, b, gb)   -- disjoint or the same memory
  local w = width(n)
  local d2, s2 = d + (n - w), s + (n - w)
  if not unchanged(a, ga, b, gb) then return false end
  copy_width[w](d, s, d2, s2)
  return true
end
local function inline_fill(d, byte, n, a, ga)
  local w = width(n)
  local d2 = d + (n - w)
  if not unchanged(a, ga) then return false end
  fill_width[w](d, d2, byte)
  return true
end

return function(avxbuf, plan_ptr, rep_movsb_ptr, rep_stosb_ptr, cookie_key_ptr)
  local MT = getmetatable(avxbuf.new(0))
  local KEY = cast(uptr, cookie_key_ptr)
  local kernelp = ffi.typeof("const avxbuf_kernel *")
  local plan = cast("const avxbuf_plan *", plan_ptr)
  local rep_movsb, rep_stosb = cast(kernelp, rep_movsb_ptr), cast(kernelp, rep_stosb_ptr)
  local methods = MT.__index
  local c_copy, c_zero, c_fill = avxbuf.copy, avxbuf.zero, avxbuf.fill
  local c_put, c_resize = methods.put, methods.resize
  local c_kernel, c_kernels = avxbuf.kernel, avxbuf.kernels

  -- src/lavxbuf.h's testbuffer: the metatable is only a filter (anything can
  -- be given it with debug.setmetatable); the cookie, which only avxbuf
  -- writes, is the proof. nil for anything else. Two userdata LuaJIT casts
  -- to a pointer other than their own bytes must not reach the cookie: a
  -- light userdata (its value: any address; refused while light userdata
  -- carry this metatable) and an io file (its FILE *, NULL once closed).
  local LIGHT = plan_ptr
  local function as_buffer(x)
    if type(x) ~= "userdata" or getmetatable_raw(x) ~= MT or getmetatable_raw(LIGHT) == MT then return nil end
    local p = cast(bufp, x)
    if p == nil or p.cookie - cast(uptr, p) ~= KEY then return nil end
    return p
  end

  -- src/dispatch.h's picks, read from the live plan (configure() rewrites it
  -- in place), and the moves the plan lets a caller inline (up to 64 bytes,
  -- where its kernel is a vector one) done here. Thresholds are
  -- compared as Lua numbers: LuaJIT 2.1.0-beta3's recorder threw on a
  -- number compared with a uint64_t it could not fold (-jv: "error thrown
  -- during recording"), and the whole call then ran interpreted.
  local function pick_copy(n, ov)
    if n < tonumber(plan.copy_small_below) then return plan.copy_small end
    local f = n >= tonumber(plan.wide_from) and plan.copy_wide or plan.copy_narrow
    if n >= tonumber(plan.nontemporal_copy_from) and ov == OV_NONE then return f.k_nt end
    if n >= tonumber(plan.rep_movsb_from) and n < tonumber(plan.rep_movsb_until) and ov ~= OV_BACKWARD then
      return rep_movsb
    end
    return f.k
  end
  local function pick_fill(n)
    if n < tonumber(plan.fill_small_below) then return plan.fill_small end
    local f = n >= tonumber(plan.wide_from) and plan.fill_wide or plan.fill_narrow
    if n >= tonumber(plan.nontemporal_fill_from) then return f.k_nt end
    if n >= tonumber(plan.rep_stosb_from) then return rep_stosb end
    return f.k
  end
  local function ffi_copies(n, ov)
    return ov == OV_NONE and n <= plan.copy_inline_upto
  end
  local function ffi_fills(n)
    return n <= plan.fill_inline_upto
  end
  -- The moves, each after its unchanged() check; false when it failed.
  local function copy_bytes(d, s, n, ov, a, ga, b, gb)
    if ffi_copies(n, ov) then return inline_copy(d, s, n, a, ga, b, gb) end
    local f = pick_copy(n, ov).copy
    if not unchanged(a, ga, b, gb) then return false end
    f(d, s, n)
    return true
  end
  local function fill_bytes(d, byte, n, a, ga)
    if ffi_fills(n) then return inline_fill(d, byte, n, a, ga) end
    local f = pick_fill(n).fill
    if not unchanged(a, ga) then return false end
    f(d, byte, n)
    return true
  end

  -- Checked against the C module: the same kernel at every size (but for
  -- the moves done here), or the C functions stay.
  for _, n in ipairs { 0, 1, 65, 100, 5000, 2 ^ 20, 2 ^ 26, 2 ^ 34 } do
    if ffi.string(pick_copy(n, OV_NONE).name) ~= c_kernel("copy", n)
       or ffi.string(pick_fill(n).name) ~= c_kernel("fill", n) then
      error("avxbuf.ffi: the plan layout does not match this avxbuf.so")
    end
  end
  if plan.copy_inline_upto > 64 or plan.fill_inline_upto > 64 then   -- what inline_copy can move
    error("avxbuf.ffi: this avxbuf.so inlines moves of more than 64 bytes")
  end
  do
    local probe = avxbuf.from("avxbuf")
    local p = as_buffer(probe)
    if not p or tonumber(p.len) ~= 6 or ffi.string(p.data, 6) ~= "avxbuf" or tonumber(p.cap) < 6 then
      error("avxbuf.ffi: the buffer layout does not match this avxbuf.so")
    end
  end

  -- true when done here; false to let the C function do it
  local function fast_copy(dst, di, src, si, n)
    local d = as_buffer(dst)
    if not d or not whole(di) then return false end
    local dgen = d.gen
    local s, sgen, sptr, slen
    if type(src) == "string" then
      sptr, slen = cast(bytep, src), #src
    else
      s = as_buffer(src)
      if not s then return false end
      sgen = s.gen
      sptr, slen = s.data, s.len
    end
    if si == nil then si = 1 end
    if n == nil and whole(si) then n = tonumber(slen) - si + 1 end
    -- The ends are compared with the int64_t lengths themselves (one
    -- instruction each when the trace knows the indices), once they are
    -- known to convert exactly.
    if not (whole(si) and whole(n) and di >= 1 and si >= 1 and n >= 0 and di <= EXACT and si <= EXACT
            and n <= EXACT and si + n - 1 <= slen and di + n - 1 <= d.len) then
      return false
    end
    local ov = OV_NONE
    if rawequal(src, dst) and di ~= si and math.abs(di - si) < n then   -- == would call __eq
      ov = di > si and OV_BACKWARD or OV_FORWARD
    end
    return copy_bytes(d.data + (di - 1), sptr + (si - 1), n, ov, d, dgen, s, sgen)
  end

  local function fast_fill(buf, byte, i, n)
    local b = as_buffer(buf)
    if not b or not whole(byte) or byte < 0 or byte > 255 then return false end
    local g = b.gen
    if i == nil then i = 1 end
    if n == nil and whole(i) then n = tonumber(b.len) - i + 1 end
    if not (whole(i) and whole(n) and i >= 1 and n >= 0 and i <= EXACT and n <= EXACT
            and i + n - 1 <= b.len) then   -- as in fast_copy
      return false
    end
    return fill_bytes(b.data + (i - 1), byte, n, b, g)
  end

  -- buf:put of up to 8 strings and buffers into the room the buffer has;
  -- everything else (growth, other types, more pieces) is the C function's.
  local function add(total, v)   -- total plus the length of piece v, or -1
    if total < 0 then return -1 end
    if type(v) == "string" then return total + #v end
    local p = as_buffer(v)
    return p and total + tonumber(p.len) or -1
  end
  -- Piece v at offset at of b, whose generation was g, data `data`,
  -- capacity cap and length old then: the offset after it, or -1 when
  -- something changed (data stays valid while the generation does).
  local function put_piece(b, g, data, cap, at, v, old)
    if at < 0 then return -1 end
    if type(v) == "string" then
      local n = #v
      if not copy_bytes(data + at, cast(bytep, v), n, OV_NONE, b, g) then return -1 end
      return at + n
    end
    local p = cast(bufp, v)
    if p == b then
      if not copy_bytes(data + at, data, old, OV_NONE, b, g) then return -1 end
      return at + old
    end
    local pg = p.gen
    local n = tonumber(p.len)
    if at + n > cap then return -1 end   -- it grew since it was counted
    if not copy_bytes(data + at, p.data, n, OV_NONE, b, g, p, pg) then return -1 end
    return at + n
  end
  local function fast_put(buf, n, v1, v2, v3, v4, v5, v6, v7, v8)
    local b = as_buffer(buf)
    if not b or n > 8 then return false end
    local g = b.gen
    local old = tonumber(b.len)
    local total = old
    if n >= 1 then total = add(total, v1) end
    if n >= 2 then total = add(total, v2) end
    if n >= 3 then total = add(total, v3) end
    if n >= 4 then total = add(total, v4) end
    if n >= 5 then total = add(total, v5) end
    if n >= 6 then total = add(total, v6) end
    if n >= 7 then total = add(total, v7) end
    if n >= 8 then total = add(total, v8) end
    local cap = tonumber(b.cap)
    if total < 0 or total > cap then return false end
    -- Bytes past the length are nobody's: an interrupted put leaves no trace.
    local at, data = old, b.data
    if n >= 1 then at = put_piece(b, g, data, cap, at, v1, old) end
    if n >= 2 then at = put_piece(b, g, data, cap, at, v2, old) end
    if n >= 3 then at = put_piece(b, g, data, cap, at, v3, old) end
    if n >= 4 then at = put_piece(b, g, data, cap, at, v4, old) end
    if n >= 5 then at = put_piece(b, g, data, cap, at, v5, old) end
    if n >= 6 then at = put_piece(b, g, data, cap, at, v6, old) end
    if n >= 7 then at = put_piece(b, g, data, cap, at, v7, old) end
    if n >= 8 then at = put_piece(b, g, data, cap, at, v8, old) end
    if at ~= total or b.gen ~= g then return false end
    b.len = total
    b.gen = g + 1
    return true
  end

  -- buf:resize(n) within the capacity: what the C function does there
  -- (zeroes, then the new length) without a call the trace cannot compile
  -- (a C function exits the trace; emptying a buffer every 64 puts cost
  -- ~5 ns per put that way).
  local function fast_resize(buf, n)
    local b = as_buffer(buf)
    if not b or not whole(n) or n < 0 then return false end
    local g = b.gen
    if n > tonumber(b.cap) then return false end
    local len = tonumber(b.len)
    if n > len then
      if not fill_bytes(b.data + len, 0, n - len, b, g) then return false end
    elseif b.gen ~= g then
      return false
    end
    b.len = n
    b.gen = g + 1
    return true
  end

  -- Module functions and methods alike (as in C: buf:copy == avxbuf.copy).
  local function copy(dst, di, src, si, n)
    if not fast_copy(dst, di, src, si, n) then via_c(c_copy, "copy", dst, di, src, si, n) end
  end
  local function zero(buf, i, n)
    if not fast_fill(buf, 0, i, n) then via_c(c_zero, "zero", buf, i, n) end
  end
  local function fill(buf, byte, i, n)
    if not fast_fill(buf, byte, i, n) then via_c(c_fill, "fill", buf, byte, i, n) end
  end
  avxbuf.copy, avxbuf.zero, avxbuf.fill = copy, zero, fill
  methods.copy, methods.zero, methods.fill = copy, zero, fill
  methods.resize = function(buf, n)
    if fast_resize(buf, n) then return buf end
    local r = via_c(c_resize, "resize", buf, n)
    return r
  end
  -- A number as the C function writes it (lua_tolstring's format; `..`
  -- consults no __tostring), made before fast_put reads a pointer: making
  -- a string can run the collector.
  local function text(v)
    if type(v) == "number" then return v .. "" end
    return v
  end
  methods.put = function(buf, ...)
    local n = select("#", ...)
    if n <= 8 then
      local v1, v2, v3, v4, v5, v6, v7, v8 = ...
      v1, v2, v3, v4, v5, v6, v7, v8 = text(v1), text(v2), text(v3), text(v4), text(v5), text(v6), text(v7), text(v8)
      if fast_put(buf, n, v1, v2, v3, v4, v5, v6, v7, v8) then return buf end
    end
    local r = via_c(c_put, "put", buf, ...)
    return r
  end

  -- The kernel names, with the moves done here.
  avxbuf.kernel = function(op, n, which)
    if which == nil and whole(n) and n >= 0 and ((op == "copy" and ffi_copies(n, OV_NONE))
                                                  or ((op == "zero" or op == "fill") and ffi_fills(n))) then
      return "ffi"
    end
    local r = via_c(c_kernel, "kernel", op, n, which)
    return r
  end
  avxbuf.kernels = function()
    local list = c_kernels()
    list[#list + 1] = { name = "ffi", isa = {}, streaming = false, available = true, jit = true }
    return list
  end
end
