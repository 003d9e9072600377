-- The CPU policy, asked through avxbuf.decide() with the CPUID registers of
-- real processors. Each entry cites the public dump its values come from;
-- `xcr0` is what a current Linux enables of the states the dump's leaf 0xD
-- reports (x87, SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM, PKRU: leaf 0xD EAX
-- masked with 0x2E7).
-- The expected defaults restate the policy of docs/policy.md's table; they are not
-- read from the implementation.
local lu = require "luaunit"
local h = require "helpers"
local avxbuf = h.avxbuf

local LIBCPUID = "anrieff/libcpuid tests/"
local INSTLAT = "InstLatx64 dump, as shipped in jcurl/RJCP.DLL.CpuId CpuIdTest/TestResources/contrib/instlatx64/"

local function intel(t) t.vendor = "GenuineIntel"; return t end
local function amd(t) t.vendor = "AuthenticAMD"; return t end

-- name = {registers, expected}
local PROCESSORS = {
  { "Xeon Gold 6154 (Skylake-SP, stepping 4)", LIBCPUID .. "intel/skylake/skylake-sp-xeon-gold.test",
    intel { leaf1_eax = 0x00050654, leaf1_ecx = 0x7FFEFBFF, leaf7_ebx = 0xD39FFFFB, leaf7_ecx = 0x00000008,
            leaf7_edx = 0x00000000, xcr0 = 0x2E7 },
    { use_avx = 2, vector_zeroing = false, uarch = "Skylake-SP/X", rule = "licence-severe", max_use_avx = 3,
      licence_events = "levels,throttle" } },
  { "Core i7-7800X (Skylake-X, stepping 4)", LIBCPUID .. "intel/core_6th_gen/skylake-x-i7.test",
    intel { leaf1_eax = 0x00050654, leaf1_ecx = 0x7FFEFBBF, leaf7_ebx = 0xD39FFFFB, leaf7_ecx = 0x00000000,
            leaf7_edx = 0x0C000000, xcr0 = 0x0E7 },
    { use_avx = 2, vector_zeroing = false, uarch = "Skylake-SP/X", rule = "licence-severe", max_use_avx = 3 } },
  { "Xeon Platinum 8269C (Cascade Lake, stepping 6)", LIBCPUID .. "intel/skylake/xeon-clx.test",
    intel { leaf1_eax = 0x00050656, leaf1_ecx = 0x7FFEFBFF, leaf7_ebx = 0xD39FFFFB, leaf7_ecx = 0x00000818,
            leaf7_edx = 0xBC000400, xcr0 = 0x2E7 },
    { use_avx = 2, vector_zeroing = false, uarch = "Cascade Lake", rule = "licence-severe", max_use_avx = 3 } },
  { "Xeon Platinum 8280 (Cascade Lake, stepping 7)", LIBCPUID .. "intel/skylake/cascade-lake-sp-xeon-platinum.test",
    intel { leaf1_eax = 0x00050657, leaf1_ecx = 0x7FFEFBFF, leaf7_ebx = 0xD39FFFFB, leaf7_ecx = 0x00000808,
            leaf7_edx = 0xBC000400, xcr0 = 0x2E7 },
    { use_avx = 2, vector_zeroing = false, uarch = "Cascade Lake", rule = "licence-severe", max_use_avx = 3 } },
  -- No public raw dump of a Cooper Lake was at hand: its signature (06-55-0B, Intel microcode release
  -- notes "CPX-SP") with the Cascade Lake 8280 registers above plus AVX512_BF16 (leaf 7.1 EAX bit 5).
  { "Cooper Lake signature (stepping 11)", "Intel microcode release notes (CPX-SP 06-55-0b); registers of the 8280",
    intel { leaf1_eax = 0x0005065B, leaf1_ecx = 0x7FFEFBFF, leaf7_ebx = 0xD39FFFFB, leaf7_ecx = 0x00000808,
            leaf7_edx = 0xBC000400, leaf7_1_eax = 0x00000020, xcr0 = 0x2E7 },
    { use_avx = 2, vector_zeroing = false, uarch = "Cooper Lake", rule = "licence-severe", max_use_avx = 3 } },
  { "Core i3-8121U (Cannon Lake)", LIBCPUID .. "intel/core_8th_gen/cannon-lake-i3-u.test",
    intel { leaf1_eax = 0x00060663, leaf1_ecx = 0x7FFAFBBF, leaf7_ebx = 0xF2BF67EB, leaf7_ecx = 0x0000000E,
            leaf7_edx = 0x9C000000, xcr0 = 0x2E7 },
    { use_avx = 2, vector_zeroing = true, uarch = "Cannon Lake", rule = "licence-mild", max_use_avx = 3 } },
  { "Core i7-1065G7 (Ice Lake client)", LIBCPUID .. "intel/core_10th_gen/ice-lake-i7.test",
    intel { leaf1_eax = 0x000706E5, leaf1_ecx = 0x7FFAFBBF, leaf7_ebx = 0xF2BF27EF, leaf7_ecx = 0x40405F4E,
            leaf7_edx = 0xBC000410, xcr0 = 0x2E7 },
    { use_avx = 2, vector_zeroing = true, uarch = "Ice Lake", rule = "licence-mild", max_use_avx = 3,
      licence_events = "levels" } },
  { "Xeon D-1718T (Ice Lake-D, under Hyper-V)", LIBCPUID .. "intel/core_10th_gen/ice-lake-xeon-d.test",
    intel { leaf1_eax = 0x000606C1, leaf1_ecx = 0xFFFAF387, leaf7_ebx = 0xF3BFBFB9, leaf7_ecx = 0x00415F46,
            leaf7_edx = 0xBC000410, xcr0 = 0x0E7 },
    { use_avx = 2, vector_zeroing = true, uarch = "Ice Lake-D", rule = "licence-mild", max_use_avx = 3,
      hypervisor = true } },
  { "Core i5-1135G7 (Tiger Lake)", LIBCPUID .. "intel/core_11th_gen/tiger-lake-i5.test",
    intel { leaf1_eax = 0x000806C1, leaf1_ecx = 0x7FFAFBBF, leaf7_ebx = 0xF3BFA7EB, leaf7_ecx = 0x18C05FDE,
            leaf7_edx = 0xFC100510, xcr0 = 0x2E7 },
    { use_avx = 2, vector_zeroing = true, uarch = "Tiger Lake", rule = "licence-mild", max_use_avx = 3 } },
  -- This project's Intel VM (cpuid -r there, 2026-12-01): Rocket Lake's model under a hypervisor, with
  -- AMX-TILE and AVX512-FP16 (leaf 7 EDX bits 24, 23), which Rocket Lake lacks.
  { "Intel VM: model 0xA7 with AMX and AVX512-FP16 (a masked model)", "cpuid -r on the Intel VM, 2026-12-01",
    intel { leaf1_eax = 0x000A0671, leaf1_ecx = 0xFFFA3203, leaf7_ebx = 0xF1BF2FFB, leaf7_ecx = 0x1A415F46,
            leaf7_edx = 0x23C14010, leaf7_1_eax = 0x00001C30, xcr0 = 0x600E7 },
    { use_avx = 3, max_vector_size = 64, avx3_threshold = 0, vector_zeroing = true,
      uarch = "Sapphire Rapids or later (AMX or AVX512-FP16 under a masked model)", rule = "no-licence-drop",
      max_use_avx = 3 } },
  { "Core i7-11700K (Rocket Lake)", LIBCPUID .. "intel/core_11th_gen/rocket-lake-i7.test",
    intel { leaf1_eax = 0x000A0671, leaf1_ecx = 0x7FFAFBBF, leaf7_ebx = 0xF2BF67EB, leaf7_ecx = 0x00405F4E,
            leaf7_edx = 0xBC000410, xcr0 = 0x2E7 },
    { use_avx = 2, vector_zeroing = true, uarch = "Rocket Lake", rule = "licence-mild", max_use_avx = 3 } },
  { "Xeon w7-2475X (Sapphire Rapids)", LIBCPUID .. "intel/sapphire_rapids/sapphire-rapids-ws-xeon-w7.test",
    intel { leaf1_eax = 0x000806F8, leaf1_ecx = 0x7FFEFBFF, leaf7_ebx = 0xF3BFBFFB, leaf7_ecx = 0xBB417FEE,
            leaf7_edx = 0xFFDD4430, leaf7_1_eax = 0x00001C30, xcr0 = 0x2E7 },
    { use_avx = 3, max_vector_size = 64, avx3_threshold = 0, vector_zeroing = true,
      uarch = "Sapphire Rapids", rule = "no-licence-drop", max_use_avx = 3, zero_streams_as_copies = false } },
  { "Core i7 (Haswell, 06-3C-3)", LIBCPUID .. "intel/haswell/haswell-i7.test",
    intel { leaf1_eax = 0x000306C3, leaf1_ecx = 0x7FDAFBBF, leaf7_ebx = 0x000027AB, xcr0 = 0x7 },
    { use_avx = 2, max_vector_size = 32, vector_zeroing = true, uarch = "Haswell", rule = "best", max_use_avx = 2 } },
  { "Core i9-12900K (Alder Lake)", LIBCPUID .. "intel/core_12th_gen/alder-lake-s-i9.test",
    intel { leaf1_eax = 0x00090672, leaf1_ecx = 0x7FFAFBFF, leaf7_ebx = 0x239CA7EB, leaf7_ecx = 0x98C027AC,
            leaf7_edx = 0xFC1CC410, leaf7_1_eax = 0x00400810, xcr0 = 0x207 },
    { use_avx = 2, vector_zeroing = true, uarch = "Alder Lake", rule = "best", max_use_avx = 2 } },
  { "Xeon Phi 7210 (Knights Landing)", INSTLAT .. "GenuineIntel/GenuineIntel0050671_KnightsLanding_CPUID.xml",
    intel { leaf1_eax = 0x00050671, leaf1_ecx = 0x7FF8F39F, leaf7_ebx = 0x1C0D23AB, leaf7_ecx = 0x00000001,
            leaf7_edx = 0x04000000, xcr0 = 0x0E7 },
    { use_avx = 2, vector_zeroing = true, uarch = "Knights Landing", rule = "best", max_use_avx = 2,
      reason_has = "without the BW and VL" } },
  { "EPYC 7713 (Zen 3, Milan)", LIBCPUID .. "amd/zen3/epyc-milan.test",
    amd { leaf1_eax = 0x00A00F11, leaf1_ecx = 0x7EDA320B, leaf7_ebx = 0x219C97A9, leaf7_ecx = 0x0040068C,
          leaf7_edx = 0x00000010, xcr0 = 0x207 },
    { use_avx = 2, vector_zeroing = true, uarch = "Zen 3", rule = "best", max_use_avx = 2,
      zero_streams_as_copies = true } },
  { "Ryzen 7 7800X3D (Zen 4, Raphael)", LIBCPUID .. "amd/zen4/ryzen7-raphael.test",
    amd { leaf1_eax = 0x00A60F12, leaf1_ecx = 0x7ED8320B, leaf7_ebx = 0xF1BF97A9, leaf7_ecx = 0x00405FCE,
          leaf7_edx = 0x10000010, leaf7_1_eax = 0x00000020, xcr0 = 0x2E7 },
    { use_avx = 3, max_vector_size = 32, avx3_threshold = 0, vector_zeroing = true, uarch = "Zen 4",
      rule = "no-licence-drop", max_use_avx = 3, reason_has = "at 32 bytes" } },
}

local function copy(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end

local function registers(name)
  for _, p in ipairs(PROCESSORS) do
    if p[1] == name then return copy(p[3]) end
  end
  error("no processor " .. name)
end

TestPolicy = {}

-- The rules src/core/policy.c defines (the names in its rules[] table), read from
-- the source rather than from decide().
local function rules_in_policy_c()
  local f = assert(io.open("src/core/policy.c", "rb"))
  local table_text = assert(f:read("*a"):match("\n} rules%[%] = (%b{});"), "no rules[] in src/core/policy.c")
  f:close()
  local names = {}
  for name in table_text:gmatch('%[R_[%w_]+%] = { [^"]*"([^"]+)"') do names[name] = true end
  return names
end

function TestPolicy.test_real_processors()
  local reached = {}
  for _, p in ipairs(PROCESSORS) do
    local name, regs, want = p[1], p[3], p[4]
    local got = avxbuf.decide(regs)
    reached[got.rule] = true
    for k, v in pairs(want) do
      if k == "reason_has" then
        lu.assertStrContains(got.reason, v, false, name)
      else
        lu.assertEquals(got[k], v, name .. ": " .. k)
      end
    end
    -- Every reason names the processor, its signature and what was chosen.
    lu.assertStrContains(got.reason, got.uarch, false, name)
    lu.assertStrContains(got.reason, string.format("model 0x%02X, stepping %d", got.model, got.stepping))
    lu.assertStrContains(got.reason, ({ [0] = "SSE2", "AVX", "AVX2", "AVX-512" })[got.use_avx])
    lu.assertTrue(got.use_avx <= got.max_use_avx, name)
  end
  -- every rule decides at least one real processor here: none rests on no evidence
  lu.assertEquals(reached, rules_in_policy_c())
end

-- HotSpot's VM_Version::avx3_threshold(): 0 on Intel family 6 with SERIALIZE
-- (leaf 7 EDX bit 14), here on a model the table does not name.
function TestPolicy.test_serialize_sets_avx3_threshold_0_as_hotspot()
  local regs = registers("Xeon w7-2475X (Sapphire Rapids)")
  regs.leaf1_eax = 0x000D0601   -- family 6, model 0xD0: not in the table
  local with = avxbuf.decide(regs)
  lu.assertEquals({ with.rule, with.use_avx, with.avx3_threshold }, { "best", 3, 0 })
  regs.leaf7_edx = h.clear_bit(regs.leaf7_edx, 14)
  local without = avxbuf.decide(regs)
  lu.assertEquals({ without.rule, without.use_avx, without.avx3_threshold }, { "best", 3, 4096 })
end

-- The masked Sapphire Rapids class takes rep movsb and rep stosb from 64 KiB
-- itself (taken above the threshold): at 64 KiB rep movsb beat the zmm loop
-- in every cell of the Intel VM's held-out sweeps (docs/policy.md).
function TestPolicy.test_masked_sapphire_rapids_strings_from_64k()
  local d = avxbuf.decide(registers("Intel VM: model 0xA7 with AMX and AVX512-FP16 (a masked model)"))
  lu.assertEquals({ d.rep_movsb_threshold, d.rep_movsb_stop_threshold, d.rep_stosb_threshold },
                  { 64 * 1024 - 1, 0, 64 * 1024 - 1 })
  lu.assertStrContains(d.thresholds_source, "from 64 KiB")
  if h.X86 then
    local rep
    for _, p in ipairs(d.picks.copy) do if p.kernel == "rep_movsb" then rep = p.from end end
    lu.assertEquals(rep, 64 * 1024)
  end
end

function TestPolicy.test_every_model_0x55_stepping_avoids_avx512()
  -- HotSpot avoids AVX-512 only below stepping 5; avxbuf on all of them.
  for stepping = 0, 15 do
    local regs = registers("Xeon Platinum 8280 (Cascade Lake, stepping 7)")
    regs.leaf1_eax = 0x00050650 + stepping
    local d = avxbuf.decide(regs)
    lu.assertEquals(d.use_avx, 2, "stepping " .. stepping)
    lu.assertFalse(d.vector_zeroing, "stepping " .. stepping)
    lu.assertStrContains(d.reason, "turbo licence")
    lu.assertStrContains(d.reason, "rep stosb for zeroing")
  end
  lu.assertStrContains(avxbuf.decide(registers("Cooper Lake signature (stepping 11)")).reason,
                       "Intel Cooper Lake (family 6, model 0x55, stepping 11)")
end

-- A processor whose OS, or whose CPUID, withholds a state: the change to its
-- registers, the fields decide() then gives, and what its reason says.
local WITHHELD = {
  os_without_avx512_state = { "Xeon w7-2475X (Sapphire Rapids)", function(regs) regs.xcr0 = 0x7 end,
                              { max_use_avx = 2, use_avx = 2 }, "the OS has not enabled AVX-512 state" },
  os_without_avx_state = { "Core i7 (Haswell, 06-3C-3)", function(regs) regs.xcr0 = 0x3 end,
                           { use_avx = 0, max_vector_size = 16 }, "the OS has not enabled AVX state" },
  osxsave_clear_ignores_xcr0 = { "Xeon w7-2475X (Sapphire Rapids)",
                                 function(regs) regs.leaf1_ecx = h.clear_bit(regs.leaf1_ecx, 27) end,
                                 { xcr0 = 0, use_avx = 0 }, "OSXSAVE is clear" },
}
for name, case in pairs(WITHHELD) do
  TestPolicy["test_" .. name] = function()
    local regs = registers(case[1])
    case[2](regs)
    local d = avxbuf.decide(regs)
    for k, v in pairs(case[3]) do lu.assertEquals(d[k], v, k) end
    lu.assertStrContains(d.reason, case[4])
  end
end

function TestPolicy.test_avx2_without_avx_is_not_trusted()
  -- Found by fuzz/fuzz_decide.c: each level needs the ones below it.
  local d = avxbuf.decide { vendor = "GenuineIntel", leaf1_eax = 0x000306C3, leaf1_ecx = 2 ^ 27,
                            leaf7_ebx = 2 ^ 5, xcr0 = 0x7 }
  lu.assertEquals(d.max_use_avx, 0)
  lu.assertEquals(d.use_avx, 0)
  lu.assertStrContains(d.reason, "AVX2 without AVX")
end

function TestPolicy.test_hypervisor_hiding_avx512()
  -- A Cascade Lake guest whose hypervisor masks AVX-512 and its XCR0 bits.
  local regs = registers("Xeon Platinum 8280 (Cascade Lake, stepping 7)")
  regs.leaf1_ecx = h.set_bit(regs.leaf1_ecx, 31)
  for _, b in ipairs { 16, 17, 30, 31 } do regs.leaf7_ebx = h.clear_bit(regs.leaf7_ebx, b) end
  regs.xcr0 = 0x7
  local d = avxbuf.decide(regs)
  lu.assertTrue(d.hypervisor)
  lu.assertFalse(d.features.avx512f)
  lu.assertEquals(d.max_use_avx, 2)
  lu.assertEquals(d.use_avx, 2)
  lu.assertFalse(d.vector_zeroing, "still a model 0x55 core underneath")
end

function TestPolicy.test_missing_fields_are_absent_features()
  local d = avxbuf.decide {}
  lu.assertEquals(d.use_avx, 0)
  lu.assertEquals(d.vendor, "")
  lu.assertEquals(d.uarch, "unknown")
  d = avxbuf.decide { vendor = "GenuineIntel", leaf1_eax = 0x00050657 }
  lu.assertEquals(d.use_avx, 0, "a Cascade Lake signature without feature bits gets SSE2")
end

local parse_dump = require "cpuid_dump"   -- bench/lib/cpuid_dump.lua

local read_file = require("harness").read_file   -- bench/lib/harness.lua

local MiB = 2 ^ 20

-- A recorded machine: the AMD Zen 5 ("Turin-like") VM this project's CI
-- may run on (spec/data/zen5-vm-cpuid.txt, `cpuid -r` there, 2026-11-30).
-- The kernel there calls it "AMD EPYC"; CPUID says otherwise. TOPOEXT is
-- clear, so leaf 0x8000001D is empty: the caches come from the legacy
-- leaves, whose 508 MiB L3 is the whole socket's.
function TestPolicy.test_recorded_zen5_vm()
  local leaves = parse_dump(read_file("spec/data/zen5-vm-cpuid.txt"))
  -- XCR0: what its leaf 0xD EAX reports, as Linux enables it (0xE7).
  local d = avxbuf.decide { leaves = leaves, xcr0 = 0xE7 }
  lu.assertEquals({ d.vendor, d.family, d.model, d.stepping }, { "AuthenticAMD", 0x1A, 0x02, 1 })
  lu.assertEquals(d.brand, "Oxide Virtual Turin-like Processor")
  for _, f in ipairs { "avx", "avx2", "erms", "fsrm", "avx512f", "avx512dq", "avx512bw", "avx512vl",
                       "avx512vbmi2", "hypervisor" } do
    lu.assertTrue(d.features[f], f)
  end
  lu.assertFalse(d.features.avx512er)
  lu.assertEquals({ d.max_use_avx, d.use_avx, d.uarch, d.rule }, { 3, 3, "Zen 5", "no-licence-drop" })
  lu.assertEquals({ d.cache.l1d, d.cache.l2, d.cache.l3, d.cache.l3_threads, d.cache.l3_capped },
                  { 48 * 1024, 1 * MiB, 32 * MiB, 0, true })
  lu.assertEquals(d.cache.leaf, { l1d = "0x80000005", l2 = "0x80000006", l3 = "0x80000006" })
  lu.assertEquals(d.nontemporal_threshold, 16 * MiB)
  lu.assertStrContains(d.nontemporal_source, "16 times the L2")
  -- FSRM rep movsb from 32 KiB (taken above the threshold, as glibc's) with
  -- no end of its own: copies stream from the nontemporal threshold (16 MiB
  -- here: the capped L3's half), and rep movsb runs until then. It won on
  -- that VM from 32 KiB, and on the Zen 5 VMs with TOPOEXT at 1-8 MiB where
  -- it kept the cache, and ran as the streaming loops where it streamed
  -- (docs/policy.md); rep stosb from the L2 to 4 times it
  lu.assertEquals({ d.rep_movsb_threshold, d.rep_movsb_stop_threshold, d.rep_stosb_threshold,
                    d.rep_stosb_stop_threshold }, { 32 * 1024 - 1, 0, 1 * MiB - 1, 4 * MiB })
  lu.assertStrContains(d.thresholds_source, "rep movsb from 32 KiB until copies stream (nontemporal_threshold)")
  if h.X86 then   -- (a build without x86 kernels picks the C library's everywhere)
    lu.assertEquals(d.picks.copy, { { from = 0, kernel = "avx512" }, { from = 32 * 1024, kernel = "rep_movsb" },
                                    { from = 16 * MiB, kernel = "avx512_nt" } })
    -- zero streams from the copies' threshold on AMD, fill from 4 times it:
    -- the L3 leaf said more than a core can use (l3_capped), and there
    -- temporal fills won at twice it
    lu.assertEquals(d.fill_nontemporal_factor, 4)
    lu.assertEquals(d.picks.zero, { { from = 0, kernel = "avx512" }, { from = 1 * MiB, kernel = "rep_stosb" },
                                    { from = 4 * MiB, kernel = "avx512" }, { from = 16 * MiB, kernel = "avx512_nt" } })
    lu.assertEquals(d.picks.fill, { { from = 0, kernel = "avx512" }, { from = 1 * MiB, kernel = "rep_stosb" },
                                    { from = 4 * MiB, kernel = "avx512" }, { from = 64 * MiB, kernel = "avx512_nt" } })
  else
    lu.assertEquals(d.picks.copy, { { from = 0, kernel = "libc" } })
  end
  -- the window follows the caches the CPU reports, not the model: with a
  -- 512 KiB L2 (leaf 0x80000006 ECX bits 31-16, in KiB) copies stream from
  -- 16 of them, 8 MiB, and rep movsb runs until then; rep stosb from it
  local l2_leaf = leaves[0x80000006][0]
  local saved = l2_leaf[3]
  l2_leaf[3] = 512 * 65536 + saved % 65536
  d = avxbuf.decide { leaves = leaves, xcr0 = 0xE7 }
  lu.assertEquals({ d.cache.l2, d.nontemporal_threshold, d.rep_stosb_threshold, d.rep_stosb_stop_threshold },
                  { 512 * 1024, 8 * MiB, 512 * 1024 - 1, 2 * MiB })
  if h.X86 then
    lu.assertEquals(d.picks.copy, { { from = 0, kernel = "avx512" }, { from = 32 * 1024, kernel = "rep_movsb" },
                                    { from = 8 * MiB, kernel = "avx512_nt" } })
  end
  l2_leaf[3] = saved
  -- what it is told of rep stosb at 4 times the L2 (the probe's or a
  -- recording's ratio, its time over the vector fill's): as fast (under
  -- 1) opens the window until fills stream, and zero streams from twice
  -- the copies' threshold, not with copies; slower, or unmeasured, keeps it
  -- to 4 times the L2
  d = avxbuf.decide { leaves = leaves, xcr0 = 0xE7 }
  lu.assertEquals({ d.rep_stosb_probe_size, d.rep_stosb_beyond_l2 }, { 4 * MiB, "unmeasured" })
  local told = {}
  for _, ratio in ipairs { 0.77, 0.99, 1.01, 1.95 } do
    local t = avxbuf.decide { leaves = leaves, xcr0 = 0xE7, rep_stosb_ratio = ratio }
    told[#told + 1] = { t.rep_stosb_beyond_l2, t.rep_stosb_stop_threshold, t.zero_streams_as_copies }
    if h.X86 and t.rep_stosb_beyond_l2 == "as fast" then
      lu.assertEquals(t.picks.zero, { { from = 0, kernel = "avx512" }, { from = 1 * MiB, kernel = "rep_stosb" },
                                      { from = 32 * MiB, kernel = "avx512_nt" } })
      lu.assertEquals(t.picks.fill, { { from = 0, kernel = "avx512" }, { from = 1 * MiB, kernel = "rep_stosb" },
                                      { from = 64 * MiB, kernel = "avx512_nt" } })
      lu.assertEquals(t.picks.copy, d.picks.copy)
    elseif h.X86 then
      lu.assertEquals(t.picks, d.picks)
    end
  end
  lu.assertEquals(told, { { "as fast", 0, false }, { "as fast", 0, false }, { "slower", 4 * MiB, true },
                          { "slower", 4 * MiB, true } })
  for _, bad in ipairs { 0, -1, "fast", 0 / 0 } do
    lu.assertErrorMsgContains("field 'rep_stosb_ratio' must be a positive number", avxbuf.decide,
                              { leaves = leaves, xcr0 = 0xE7, rep_stosb_ratio = bad })
  end
  -- the same CPU without FSRM: no window
  local ext7 = leaves[7][0]
  ext7[4] = h.clear_bit(ext7[4], 4)
  d = avxbuf.decide { leaves = leaves, xcr0 = 0xE7 }
  lu.assertEquals({ d.rep_movsb_threshold, d.rep_movsb_stop_threshold, d.rep_stosb_threshold,
                    d.rep_stosb_stop_threshold }, { 0, 0, 0, 0 })
end

-- A recorded machine: the other Zen 5 VM configuration (spec/data/
-- zen5-topoext-vm-cpuid.txt, `cpuid -r -1` there, 2026-12-05; its glibc
-- diagnostics and two csweep sweeps beside it, spec/data/README.md). Same
-- signature and brand as the one above; /proc/cpuinfo lists topoext and leaf
-- 0x8000001D is filled, but CPUID's TOPOEXT bit is as clear as there, so the
-- caches come from the legacy leaves, which report the CCD's own 32 MiB L3
-- here. The plan is the one above: the rules read the L2, 1 MiB on both.
function TestPolicy.test_recorded_zen5_topoext_vm()
  local leaves = parse_dump(read_file("spec/data/zen5-topoext-vm-cpuid.txt"))
  local d = avxbuf.decide { leaves = leaves, xcr0 = 0xE7 }
  lu.assertEquals({ d.vendor, d.family, d.model, d.stepping, d.brand },
                  { "AuthenticAMD", 0x1A, 0x02, 1, "Oxide Virtual Turin-like Processor" })
  lu.assertEquals({ d.max_use_avx, d.use_avx, d.max_vector_size, d.uarch, d.rule },
                  { 3, 3, 64, "Zen 5", "no-licence-drop" })
  lu.assertFalse(h.bit_is_set(leaves[0x80000001][0][3], 22), "TOPOEXT clear")
  lu.assertEquals(leaves[0x8000001D][3][1] % 256, 0x63, "leaf 0x8000001D describes the L3 all the same")
  lu.assertEquals({ d.cache.l1d, d.cache.l2, d.cache.l3, d.cache.l3_capped }, { 48 * 1024, 1 * MiB, 32 * MiB, false })
  lu.assertEquals(d.cache.leaf, { l1d = "0x80000005", l2 = "0x80000006", l3 = "0x80000006" })
  lu.assertEquals({ d.rep_movsb_threshold, d.rep_movsb_stop_threshold, d.rep_stosb_threshold,
                    d.rep_stosb_stop_threshold, d.nontemporal_threshold },
                  { 32 * 1024 - 1, 0, 1 * MiB - 1, 4 * MiB, 16 * MiB })
  -- the plan of the VM above but for fills, which stream from twice the
  -- copies' threshold here: this L3 leaf is no cap
  local other = avxbuf.decide { leaves = parse_dump(read_file("spec/data/zen5-vm-cpuid.txt")), xcr0 = 0xE7 }
  lu.assertEquals({ d.picks.copy, d.picks.zero, d.picks.find },
                  { other.picks.copy, other.picks.zero, other.picks.find })
  lu.assertEquals(d.fill_nontemporal_factor, 2)
  if h.X86 then
    lu.assertEquals(d.picks.fill, { { from = 0, kernel = "avx512" }, { from = 1 * MiB, kernel = "rep_stosb" },
                                    { from = 4 * MiB, kernel = "avx512" }, { from = 32 * MiB, kernel = "avx512_nt" } })
    lu.assertEquals(d.picks.copy, { { from = 0, kernel = "avx512" }, { from = 32 * 1024, kernel = "rep_movsb" },
                                    { from = 16 * MiB, kernel = "avx512_nt" } })
  end
end

-- A recorded machine: the AMD Zen 4 ("Genoa") VM this project's CI may run
-- on (spec/data/zen4-vm-cpuid.txt, `cpuid -r -1` there, 2026-12-04). Its
-- 512-bit operations run as two 256-bit halves, and its copies are the
-- 32-byte family's at every size (docs/policy.md: the avx512 row below 0.95x
-- the best row in 90-104 of 247 cells there, avx512_256 in 23-26); zero and
-- fill too (max_vector_size is one width for all: the two widths level
-- there from 512 B). TOPOEXT is set: the caches from leaf 0x8000001D.
function TestPolicy.test_recorded_zen4_vm()
  local leaves = parse_dump(read_file("spec/data/zen4-vm-cpuid.txt"))
  local d = avxbuf.decide { leaves = leaves, xcr0 = 0xE7 }
  lu.assertEquals({ d.vendor, d.family, d.model, d.stepping }, { "AuthenticAMD", 0x19, 0x11, 1 })
  lu.assertEquals({ d.max_use_avx, d.use_avx, d.max_vector_size, d.avx3_threshold, d.uarch, d.rule },
                  { 3, 3, 32, 0, "Zen 4", "no-licence-drop" })
  lu.assertStrContains(d.reason, "using AVX-512 at 32 bytes")
  lu.assertEquals({ d.cache.l2, d.cache.l3, d.cache.l3_capped }, { 1 * MiB, 32 * MiB, false })
  lu.assertEquals(d.cache.leaf.l3, "0x8000001D")
  lu.assertEquals({ d.rep_movsb_threshold, d.rep_stosb_threshold, d.nontemporal_threshold }, { 0, 0, 16 * MiB })
  lu.assertStrContains(d.nontemporal_source, "16 times the L2")
  if h.X86 then
    lu.assertEquals(d.picks.copy, { { from = 0, kernel = "avx512_256" },
                                    { from = 16 * MiB, kernel = "avx512_256_nt" } })
    lu.assertEquals(d.picks.fill, { { from = 0, kernel = "avx512_256" },
                                    { from = 32 * MiB, kernel = "avx512_256_nt" } })
    lu.assertEquals(d.picks.zero, { { from = 0, kernel = "avx512_256" },
                                    { from = 16 * MiB, kernel = "avx512_256_nt" } })
  end
  -- no rep stosb window here, so nothing to measure, and a ratio moves nothing
  local told = avxbuf.decide { leaves = leaves, xcr0 = 0xE7, rep_stosb_ratio = 0.5 }
  lu.assertEquals({ d.rep_stosb_probe_size, told.rep_stosb_probe_size }, { 0, 0 })
  lu.assertEquals({ told.picks, told.zero_streams_as_copies }, { d.picks, true })
  -- Zen 5 keeps 64 bytes (a 512-bit datapath), as does this VM's signature
  -- read as Zen 5's family
  local sig = leaves[1][0]
  sig[1] = 0x00B00F21   -- family 0x1A
  d = avxbuf.decide { leaves = leaves, xcr0 = 0xE7 }
  lu.assertEquals({ d.uarch, d.max_vector_size }, { "Zen 5", 64 })
  lu.assertFalse(d.reason:find("at 32 bytes", 1, true) ~= nil)
end

-- The same reading with TOPOEXT set and leaf 0x8000001D filled (a Zen 3's
-- values, from the dev VM): that leaf wins, with its sharing count; with
-- TOPOEXT clear the same leaf is ignored.
function TestPolicy.test_topoext_gates_leaf_8000001d()
  local leaves = parse_dump(read_file("spec/data/zen5-vm-cpuid.txt"))
  leaves[0x8000001D] = {
    [0] = { 0x00000121, 0x01C0003F, 0x0000003F, 0 }, [1] = { 0x00000122, 0x01C0003F, 0x0000003F, 0 },
    [2] = { 0x00000143, 0x01C0003F, 0x000003FF, 2 }, [3] = { 0x00004163, 0x03C0003F, 0x00007FFF, 1 },
  }
  local d = avxbuf.decide { leaves = leaves, xcr0 = 0xE7 }
  lu.assertEquals(d.cache.leaf.l3, "0x80000006", "TOPOEXT is clear")
  local ext1 = leaves[0x80000001][0]
  ext1[3] = h.set_bit(ext1[3], 22)
  d = avxbuf.decide { leaves = leaves, xcr0 = 0xE7 }
  lu.assertEquals({ d.cache.l1d, d.cache.l2, d.cache.l3, d.cache.l3_threads, d.cache.l3_capped },
                  { 32 * 1024, 512 * 1024, 32 * MiB, 2, false })
  lu.assertEquals(d.cache.leaf, { l1d = "0x8000001D", l2 = "0x8000001D", l3 = "0x8000001D" })
end

function TestPolicy.test_bad_leaves_name_the_register()
  local ok, err = pcall(avxbuf.decide, { leaves = { [0] = { [0] = { 13, "x", 0, 0 } } } })
  lu.assertFalse(ok)
  lu.assertStrContains(err, "leaves[0x0][0][2] must be an integer")
end

-- A dump that is not one is refused, naming what is wrong (a missing leaf
-- reads as zeros, so these would otherwise decide for a CPU without features).
function TestPolicy.test_a_malformed_dump_is_refused()
  local LEAF0 = { [0] = { 0xD, 0x756E6547, 0x6C65746E, 0x49656E69 } }
  local cases = {
    { 5, "field 'leaves' must be a table of CPUID leaves" },
    { "garbage", "field 'leaves' must be a table of CPUID leaves" },
    { { garbage = 1 }, "field 'leaves' has key 'garbage', not a leaf number" },
    { { [0] = LEAF0, [1.5] = {} }, "field 'leaves' has key '1.5', not a leaf number" },
    { { [0] = LEAF0, [-1] = {} }, "field 'leaves' has key '-1', not a leaf number" },
    { { [0] = LEAF0, [2 ^ 32] = {} }, "not a leaf number" },
    { { [0] = LEAF0, [1] = 5 }, "leaves[0x1] must be a table of sub-leaves" },
    { { [0] = LEAF0, [0x80000001] = "x" }, "leaves[0x80000001] must be a table of sub-leaves" },
    { {}, "field 'leaves' has no leaf 0 (the vendor and the highest leaf)" },
    { { [1] = { [0] = { 0, 0, 0, 0 } } }, "field 'leaves' has no leaf 0" },
    { { [0] = { x = {} } }, "leaves[0x0] has key 'x', not a sub-leaf number" },
    { { [0] = { [0] = 7 } }, "leaves[0x0][0] must be a table of 4 registers" },
    { { [0] = LEAF0, [7] = { [0] = { 0, 0, 0, 0 }, [1] = true } }, "leaves[0x7][1] must be a table of 4 registers" },
  }
  for i, c in ipairs(cases) do
    local ok, err = pcall(avxbuf.decide, { leaves = c[1] })
    lu.assertFalse(ok, "case " .. i)
    lu.assertStrContains(err, "bad argument #1 to ", false, "case " .. i)
    lu.assertStrContains(err, c[2], false, "case " .. i)
  end
  -- the smallest dump there is: leaf 0 alone, an Intel CPU without features
  local d = avxbuf.decide { leaves = { [0] = LEAF0 } }
  lu.assertEquals({ d.vendor, d.use_avx }, { "GenuineIntel", 0 })
end

-- The live machine: cpu() agrees with CPUID as an independent reader
-- (Debian's cpuid) sees it, run through the same decoding; not with what the
-- kernel's CPU listing says, which hypervisors rewrite (model name, flags).
TestLiveCpu = {}

function TestLiveCpu.test_matches_cpuid()
  if h.EMULATED_CPUID then lu.skip("valgrind emulates CPUID") end
  h.needs_x86()
  h.needs_children()
  local out, status = h.shell("cpuid -1 -r")
  lu.assertEquals(status, 0, "Debian's cpuid (tools/deps.sh build installs it): " .. out)
  local cpu = avxbuf.cpu()
  -- (with what this process measured, if it has: the policy's other input)
  local probe = cpu.rep_stosb_probe
  local d = avxbuf.decide { leaves = parse_dump(out), xcr0 = cpu.xcr0,
                            rep_stosb_ratio = probe and probe.fact ~= "unmeasured" and probe.ratio or nil }
  for k, v in pairs(d) do
    if k ~= "picks" then lu.assertEquals(cpu[k], v, k) end   -- (cpu() has the live picks: avxbuf.kernel)
  end
  avxbuf.reset()
  for _, op in ipairs { "copy", "zero", "fill" } do
    for _, p in ipairs(d.picks[op]) do   -- (LuaJIT moves up to 64 bytes itself: "ffi")
      local n = math.max(p.from, 65)
      lu.assertEquals(avxbuf.kernel(op, n), p.kernel, op .. " " .. n)
    end
  end
  lu.assertEquals(cpu.default.use_avx, math.min(cpu.max_use_avx, cpu.default.use_avx))
  lu.assertStrContains(cpu.reason, cpu.uarch)
end

-- What the policy cannot read from CPUID it measures, once per process, at
-- the first fill of its size (src/core/measured.c): here in a child, whose
-- process has measured nothing yet. A smaller fill measures nothing; the
-- measured fill leaves the bytes a byte loop's reference says, and the
-- guards around it; the fact follows the rule from the figures reported,
-- and the plan and settings follow the fact. Where the policy needs no
-- measurement (no rep stosb window to end), none is taken.
function TestLiveCpu.test_the_rep_stosb_measurement()
  h.needs_children()
  local out, status = h.run_child({}, [[
    local avxbuf = require "avxbuf"
    local size = avxbuf.cpu().default.rep_stosb_probe_size
    local n = size > 0 and size or 8 * 2 ^ 20
    local b = avxbuf.new()
    b:put(("\17"):rep(n + 200))   -- (a copy: no fill yet)
    b:fill(0x22, 101, n - 1)
    io.write("before ", tostring(avxbuf.cpu().rep_stosb_probe), "\n")
    b:fill(0x33, 101, n)
    local s, t = b:tostring(), {}
    for i = 1, 100 do t[#t + 1] = s:byte(i) == 0x11 and "" or "head " .. i end
    for i = 101, 100 + n, 4093 do t[#t + 1] = s:byte(i) == 0x33 and "" or "body " .. i end
    for i = 101 + n, #s do t[#t + 1] = s:byte(i) == 0x11 and "" or "tail " .. i end
    io.write("bytes ", table.concat(t), s:sub(101, 100 + n) == ("\51"):rep(n) and "ok" or "differ", "\n")
    -- (a measurement whose A/A was too wide is taken again at a later fill,
    -- a few times, and then reported as it is: the emulated build's)
    for _ = 1, 10 do if size == 0 or avxbuf.cpu().rep_stosb_probe then break end b:fill(0x33, 101, n) end
    local cpu, c = avxbuf.cpu(), avxbuf.config()
    local p = cpu.rep_stosb_probe or {}
    io.write(string.format("size %d probe %s %s %s %s %s %s %s\n", size, tostring(p.size), tostring(p.rounds),
      tostring(p.ratio), tostring(p.aa), tostring(p.fact), tostring(p.rep_ns), tostring(p.vector_ns)))
    io.write(string.format("told %s stop %d nt %d fills %d zero %d amd %s fill %s zero %s vector %s streaming %s\n",
      cpu.rep_stosb_beyond_l2, c.rep_stosb_stop_threshold, c.nontemporal_threshold, c.memset_nontemporal_threshold,
      c.zero_nontemporal_threshold, tostring(cpu.vendor == "AuthenticAMD"), avxbuf.kernel("fill", n),
      avxbuf.kernel("zero", n), avxbuf.kernel("fill", n, "vector"), avxbuf.kernel("fill", n, "streaming")))
  ]])
  lu.assertEquals(status, 0, out)
  lu.assertStrContains(out, "before nil\n")
  lu.assertStrContains(out, "bytes ok\n")
  local size = tonumber(out:match("size (%d+)"))
  if size == 0 then
    lu.assertStrContains(out, "probe nil nil nil nil nil nil nil\n")
    lu.assertStrContains(out, "told unmeasured")
    return
  end
  local psize, rounds, ratio, aa, fact, rep_ns, vector_ns =
    out:match("probe (%d+) (%d+) (%S+) (%S+) (.-) (%S+) (%S+)\n")
  lu.assertEquals({ tonumber(psize), tonumber(rounds) }, { size, 5 }, out)
  ratio, aa = tonumber(ratio), tonumber(aa)
  lu.assertTrue(tonumber(rep_ns) > 0 and tonumber(vector_ns) > 0, out)
  local want = not (aa > 0.9 and aa < 1.1) and "unmeasured" or ratio < 1 and "as fast" or "slower"
  lu.assertEquals(fact, want, out)
  -- the settings and the kernels at that size follow the fact (config and
  -- kernel() read after it)
  local told, stop, nt, fills, zero, on_amd, kfill, kzero, vector, streaming = out:match(
    "told (.-) stop (%d+) nt (%d+) fills (%d+) zero (%d+) amd (%a+) fill (%S+) zero (%S+) vector (%S+) streaming (%S+)")
  stop, nt, fills, zero = tonumber(stop), tonumber(nt), tonumber(fills), tonumber(zero)
  lu.assertEquals(told, fact, out)
  local fast = fact == "as fast"
  lu.assertEquals(stop, fast and 0 or size, out)
  lu.assertEquals(zero, (on_amd == "true" and not fast) and nt or 2 * nt, out)
  local within = fast and "rep_stosb" or vector
  lu.assertEquals({ kfill, kzero }, { size < fills and within or streaming, size < zero and within or streaming }, out)
end
