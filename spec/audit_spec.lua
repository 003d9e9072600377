-- avxbuf.kernels(): what each kernel says of its instructions, checked two
-- ways: against what the dispatcher picks under each knob, and -- on the
-- native Lua 5.4 build -- against the compiled code of the module under
-- test (tools/audit.lua), whose own planted-violation test runs here too.
local lu = require "luaunit"
local h = require "helpers"
local avxbuf = h.avxbuf

local function by_name()
  local t = {}
  for _, k in ipairs(avxbuf.kernels()) do t[k.name] = k end
  return t
end

-- Every kernel name the dispatcher can pick under these knobs, at sizes
-- around every threshold.
local function picked(knobs)
  h.use(knobs)
  local cfg, names = avxbuf.config(), {}
  local sizes = { 0, 1, 16, 17, 32, 33, 64, 65, 1000, 4096, 100000, 2 ^ 20 }
  for _, k in ipairs { "avx3_threshold", "rep_movsb_threshold", "rep_stosb_threshold", "nontemporal_threshold" } do
    for d = -1, 1 do sizes[#sizes + 1] = math.max(0, cfg[k] + d) end
    sizes[#sizes + 1] = 2 * cfg[k]
  end
  for _, n in ipairs(sizes) do
    for _, op in ipairs { "copy", "zero", "fill" } do names[avxbuf.kernel(op, n)] = true end
  end
  avxbuf.reset()
  return names
end

TestKernelsTable = {}

function TestKernelsTable.test_fields()
  for _, k in ipairs(avxbuf.kernels()) do
    lu.assertIsString(k.name)
    lu.assertIsTable(k.isa)
    lu.assertEquals(k.streaming, k.name:match("_nt$") ~= nil, k.name)
    lu.assertIsBoolean(k.available)
    local widths = { [0] = true, [128] = true, [256] = true, [512] = true }
    if k.vector_bits then lu.assertTrue(widths[k.vector_bits], k.name) end
    if k.use_avx then lu.assertEquals(k.vector_bits > 0, true, k.name) end
  end
  lu.assertNotNil(by_name().libc)
  lu.assertNil(by_name().libc.vector_bits, "the C library decides its own registers")
end

-- The kernels the binary holds (its avxbuf_k_NAME objects, as nm lists
-- them) are the ones kernels() names: a kernel left out of the list would
-- never be picked, tested or audited (tools/audit.lua takes its list).
function TestKernelsTable.test_lists_every_kernel_in_the_binary()
  h.needs_children()
  local _, status = h.shell("command -v nm")
  if status ~= 0 then lu.skip("no nm (binutils)") end
  local so = (os.getenv("AVXBUF_SPEC_DIR") or "build") .. "/avxbuf.so"
  local out
  out, status = h.shell("nm " .. h.sh(so))
  lu.assertEquals(status, 0, out)
  local in_binary, listed = {}, {}
  for name in out:gmatch("%x+ [dDrR] avxbuf_k_([%w_]+)\n") do in_binary[name] = true end
  for name in pairs(by_name()) do listed[name] = true end
  lu.assertEquals(listed, in_binary)
end

function TestKernelsTable.test_available_follows_cpu_and_os()
  local max = avxbuf.cpu().max_use_avx
  for _, k in ipairs(avxbuf.kernels()) do
    if k.use_avx then
      -- AVX-512 needs all of F, BW and VL and the OS's ZMM state: the level
      -- says it; the emulated build runs its AVX-512 kernels (SIMDe) on any
      -- x86 CPU, and the others only where the CPU has their level
      local ok = k.use_avx <= max or (avxbuf.emulated and k.use_avx == 3)
      lu.assertEquals(k.available, ok, k.name)
    end
  end
  if h.X86 then
    lu.assertEquals(by_name().rep_movsb.available, avxbuf.cpu().features.erms)
  else
    lu.assertEquals(#avxbuf.kernels(), 1, "only the C library off x86")
  end
end

function TestKernelsTable.test_dispatcher_picks_only_available_kernels()
  local k = by_name()
  for _, cfg in ipairs(h.kernel_configs()) do
    for name in pairs(picked(cfg.knobs)) do
      lu.assertNotNil(k[name], name)
      lu.assertTrue(k[name].available, name .. " picked under " .. cfg.name)
    end
  end
end

-- The promises, from the selection side (make audit checks the code side).
function TestKernelsTable.test_knobs_bound_the_registers_picked()
  h.needs_x86()
  local k = by_name()
  local function widest(knobs, ops)
    h.use(knobs)
    local w = 0
    for _, n in ipairs { 1, 33, 100, 5000, 10 ^ 6, 2 ^ 26 } do
      for _, op in ipairs(ops) do w = math.max(w, k[avxbuf.kernel(op, n)].vector_bits or 0) end
    end
    avxbuf.reset()
    return w
  end
  for _, level in ipairs { 2, 3 } do
    lu.assertTrue(widest({ use_avx = level, max_vector_size = 32 }, { "copy", "zero", "fill" }) <= 256)
    lu.assertTrue(widest({ use_avx = level, vector_zeroing = false }, { "zero", "fill" }) <= 128)
  end
  lu.assertTrue(widest({ use_avx = 2 }, { "copy", "zero", "fill" }) <= 256)
  for name in pairs(picked { use_avx = 2 }) do
    lu.assertNotEquals(k[name].use_avx, 3, name .. " under use_avx=2")
  end
end

TestAudit = {}

-- The audit loads the module into lua5.4 and reads native instructions.
local function needs_audit()
  h.needs_children()
  h.needs_x86()
  if _VERSION ~= "Lua 5.4" or rawget(_G, "jit") then
    lu.skip("the audit loads the module into lua5.4 (this is " .. (rawget(_G, "jit") and "LuaJIT" or _VERSION) .. ")")
  end
  if avxbuf.emulated then lu.skip("the emulated build runs SIMDe code, not the instructions it stands for") end
  if os.getenv("AVXBUF_SPEC_SANITIZED") then lu.skip("sanitizer instrumentation adds calls inside the kernels") end
  local _, status = h.shell("command -v objdump")
  if status ~= 0 then lu.skip("no objdump (binutils)") end
  return os.getenv("AVXBUF_SPEC_DIR") or "build"
end

function TestAudit.test_module_under_test_keeps_its_promises()
  local dir = needs_audit()
  local out, status = h.shell(string.format("lua5.4 tools/audit.lua --report %s %s",
                                            h.sh(dir .. "/avxbuf.so"), h.sh(dir .. "/avxbuf/counters.so")))
  lu.assertEquals(status, 0, out)
  lu.assertStrContains(out, ": 0 violations")
  -- what the code does, kernel by kernel, is what kernels() says
  local found = {}
  for name, widest, streaming in out:gmatch("\n?(%S+) +[%w ]- widest +(%d+) +streaming (%a+)") do
    found[name] = { widest = tonumber(widest), streaming = streaming == "true" }
  end
  for _, k in ipairs(avxbuf.kernels()) do
    lu.assertNotNil(found[k.name], k.name .. " not found in the code:\n" .. out)
    if k.vector_bits then lu.assertEquals(found[k.name].widest, k.vector_bits, k.name) end
    if k.vector_bits ~= 0 then lu.assertEquals(found[k.name].streaming, k.streaming, k.name) end
  end
end

function TestAudit.test_audit_reports_each_planted_violation()
  local dir = needs_audit()
  local out, status = h.shell("lua5.4 tools/audit_planted.lua " .. h.sh(dir))
  lu.assertEquals(status, 0, out)
  lu.assertStrContains(out, "0 missed, 0 reported in clean code")
end
