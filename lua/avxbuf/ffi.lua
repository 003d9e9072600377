-- LuaJIT: avxbuf.copy, zero and fill (and the methods) through the FFI, so
-- that the JIT compiles the argument checks and the call. The checks are the
-- C functions' own; whatever this fast path does not handle plainly goes to
-- the C function, which does the work or raises the documented error.
-- Loaded by the C module under LuaJIT only (see install_ffi_path).
local ffi = require "ffi"

-- The layouts of src/lavxbuf.h (the first fields of a buffer),
-- src/kernels/kernels.h (avxbuf_kernel) and src/dispatch.h (avxbuf_family,
-- avxbuf_plan); checked against avxbuf itself at load.
if not pcall(ffi.typeof, "avxbuf_buffer") then
  ffi.cdef [[
    typedef struct { uintptr_t cookie; size_t len; unsigned char *data; } avxbuf_buffer;
    typedef struct {
      const char *name;
      void (*copy)(void *dst, const void *src, size_t n);
      void (*fill)(void *dst, int byte, size_t n);
    } avxbuf_kernel;
    typedef struct { const avxbuf_kernel *k, *k_nt; } avxbuf_family;
    typedef struct {
      avxbuf_family copy_narrow, copy_wide, fill_narrow, fill_wide;
      size_t wide_from, rep_movsb_from, rep_stosb_from;
      size_t nontemporal_copy_from, nontemporal_fill_from;
    } avxbuf_plan;
  ]]
end

local bufp = ffi.typeof("avxbuf_buffer *")
local bytep = ffi.typeof("const unsigned char *")
local uptr = ffi.typeof("uintptr_t")
local cast, type, getmetatable, tonumber, bxor = ffi.cast, type, getmetatable, tonumber, bit.bxor
local OV_NONE, OV_FORWARD, OV_BACKWARD = 0, 1, 2

-- The C function, with the error it raises named as the caller sees it:
-- called from here it has no name, and for a method the argument numbers
-- shift by one (what luaL_argerror does for a method call).
local function via_c(f, name, method, ...)
  local ok, err = pcall(f, ...)
  if ok then return end
  err = tostring(err):gsub("^bad argument #(%d+) to '[^']*' %((.*)%)$", function(k, what)
    k = tonumber(k) - (method and 1 or 0)
    if k == 0 then return string.format("calling '%s' on bad self (%s)", name, what) end
    return string.format("bad argument #%d to '%s' (%s)", k, name, what)
  end)
  error(err, 0)   -- as the C function raises it: no position
end

local function whole(x) return type(x) == "number" and x % 1 == 0 end

return function(avxbuf, plan_ptr, rep_movsb_ptr, rep_stosb_ptr, cookie_key_ptr)
  local MT = getmetatable(avxbuf.new(0))
  local KEY = cast(uptr, cookie_key_ptr)

  -- src/lavxbuf.h's testbuffer: the metatable is only a filter (anything can
  -- be given it with debug.setmetatable); the cookie, which only avxbuf
  -- writes, is the proof. nil for anything else.
  local function as_buffer(x)
    if type(x) ~= "userdata" or getmetatable(x) ~= MT then return nil end
    local p = cast(bufp, x)
    if p.cookie ~= bxor(cast(uptr, p), KEY) then return nil end
    return p
  end
  do
    local probe = avxbuf.from("avxbuf")
    local p = as_buffer(probe)
    if not p or tonumber(p.len) ~= 6 or ffi.string(p.data, 6) ~= "avxbuf" then
      error("avxbuf.ffi: the buffer layout does not match this avxbuf.so")
    end
  end
  local c_copy, c_zero, c_fill = avxbuf.copy, avxbuf.zero, avxbuf.fill
  local kernelp = ffi.typeof("const avxbuf_kernel *")
  local plan = cast("const avxbuf_plan *", plan_ptr)
  local rep_movsb, rep_stosb = cast(kernelp, rep_movsb_ptr), cast(kernelp, rep_stosb_ptr)

  -- dispatch.h's avxbuf_pick_copy and avxbuf_pick_fill, read from the live
  -- plan (configure() rewrites it in place).
  local function pick_copy(n, ov)
    local f = n >= plan.wide_from and plan.copy_wide or plan.copy_narrow
    if n >= plan.nontemporal_copy_from and ov == OV_NONE then return f.k_nt end
    if n >= plan.rep_movsb_from and ov ~= OV_BACKWARD then return rep_movsb end
    return f.k
  end
  local function pick_fill(n)
    local f = n >= plan.wide_from and plan.fill_wide or plan.fill_narrow
    if n >= plan.nontemporal_fill_from then return f.k_nt end
    if n >= plan.rep_stosb_from then return rep_stosb end
    return f.k
  end
  for _, n in ipairs { 0, 1, 100, 5000, 2 ^ 20, 2 ^ 26, 2 ^ 34 } do
    if ffi.string(pick_copy(n, OV_NONE).name) ~= avxbuf.kernel("copy", n)
       or ffi.string(pick_fill(n).name) ~= avxbuf.kernel("fill", n) then
      error("avxbuf.ffi: the plan layout does not match this avxbuf.so")
    end
  end

  -- true when done here; false to let the C function do it
  local function fast_copy(dst, di, src, si, n)
    local d = as_buffer(dst)
    if not d or not whole(di) then return false end
    local dlen = tonumber(d.len)
    local sptr, slen
    if type(src) == "string" then
      sptr, slen = cast(bytep, src), #src
    else
      local s = as_buffer(src)
      if not s then return false end
      sptr, slen = s.data, tonumber(s.len)
    end
    if si == nil then si = 1 end
    if n == nil and whole(si) then n = slen - si + 1 end
    if not (whole(si) and whole(n) and di >= 1 and si >= 1 and n >= 0
            and si + n - 1 <= slen and di + n - 1 <= dlen) then
      return false
    end
    local ov = OV_NONE
    if src == dst and di ~= si and math.abs(di - si) < n then
      ov = di > si and OV_BACKWARD or OV_FORWARD
    end
    pick_copy(n, ov).copy(d.data + (di - 1), sptr + (si - 1), n)
    return true
  end

  local function fast_fill(buf, byte, i, n)
    local b = as_buffer(buf)
    if not b or not whole(byte) or byte < 0 or byte > 255 then return false end
    local len = tonumber(b.len)
    if i == nil then i = 1 end
    if n == nil and whole(i) then n = len - i + 1 end
    if not (whole(i) and whole(n) and i >= 1 and n >= 0 and i + n - 1 <= len) then return false end
    pick_fill(n).fill(b.data + (i - 1), byte, n)
    return true
  end

  local function copy(dst, di, src, si, n)
    if not fast_copy(dst, di, src, si, n) then via_c(c_copy, "copy", false, dst, di, src, si, n) end
  end
  local function zero(buf, i, n)
    if not fast_fill(buf, 0, i, n) then via_c(c_zero, "zero", false, buf, i, n) end
  end
  local function fill(buf, byte, i, n)
    if not fast_fill(buf, byte, i, n) then via_c(c_fill, "fill", false, buf, byte, i, n) end
  end
  avxbuf.copy, avxbuf.zero, avxbuf.fill = copy, zero, fill

  -- Methods: buf:copy(...) and friends, with method-call error numbering.
  local methods = MT.__index
  methods.copy = function(dst, di, src, si, n)
    if not fast_copy(dst, di, src, si, n) then via_c(c_copy, "copy", true, dst, di, src, si, n) end
  end
  methods.zero = function(buf, i, n)
    if not fast_fill(buf, 0, i, n) then via_c(c_zero, "zero", true, buf, i, n) end
  end
  methods.fill = function(buf, byte, i, n)
    if not fast_fill(buf, byte, i, n) then via_c(c_fill, "fill", true, buf, byte, i, n) end
  end
end
