-- The instruction audit: what avxbuf promises about instructions, checked on
-- the compiled code (objdump -d), function by function.
--
--   lua5.4 tools/audit.lua [--kernels-from SO] [--select SO ...] [--report] FILE...
--
-- FILE: shared objects (or executables, or relocatable objects) to check.
-- Which functions are kernels, and what each may execute, comes from
-- avxbuf.kernels() of --kernels-from (default: the first FILE): kernel NAME's
-- code is in functions [avxbuf_]NAME_copy, NAME_fill, NAME_find and
-- NAME_rfind (with NAME_find_vec and NAME_rfind_vec), plus the parts
-- compilers split off them (NAME_copy.cold, NAME_copy.part.0, ...) and
-- NAME_copy_skew32, the copy's loops another family hands copies to
-- (src/kernels/avx512.c), and NAME_copy_large, its copy past the size tests
-- (src/kernels/kernels.h).
-- Rules:
--   isa        a kernel uses no instruction beyond the features its isa lists
--              (sse2 and erms: nothing beyond SSE2, no VEX; avx: no AVX2-only
--              instruction; avx2: no EVEX); no register wider than its
--              vector_bits; everything that is not a kernel stays within
--              x86-64's SSE2 baseline.
--   streaming  a streaming kernel's entry points contain non-temporal stores;
--              a temporal kernel contains none.
--   fence      on every path from a non-temporal store to a ret or a tail
--              jump, an sfence executes.
--   upper      on every path from an instruction that touches a ymm/zmm
--              register 0-15 to a ret, tail jump or call, a vzeroupper
--              executes; registers 16-31 (which vzeroupper leaves alone and
--              SSE code cannot name) are used at 256/512 bits only by the
--              512-bit family, whose CPUs run it without a licence drop.
--   align      every kernel entry point starts on a 64-byte boundary
--              (AVXBUF_KERNEL_ALIGN, src/kernels/kernels.h).
--   agree      the widest register a kernel touches is its vector_bits, and
--              it streams exactly when kernels() says so.
--   probe      the clock probe's chains (src/core/clock.c: avxbuf_chain_add and
--              avxbuf_chain_imul) are in the module, touch no vector
--              register, and each one's loop (from its one backward
--              branch's target to that branch) holds 16 of its instruction,
--              all into one register, and no memory operand: the chain it
--              times, nothing wider.
--   zeroing    with vector_zeroing=false, every kernel the dispatcher picks
--              for zero and fill (asked of each --select module at every
--              use_avx, max_vector_size and size around the thresholds) has
--              a fill function touching no register wider than 128 bits.
-- Output: one line per violation (file, function, address, rule, instruction,
-- why) and a closing summary; the exit status is 1 when there is any.
local argparse = require "argparse"

local parser = argparse("audit.lua", "Check the compiled instructions of avxbuf's kernels.")
parser:argument("files", "objects to disassemble and check"):args("+")
parser:option("--kernels-from", "avxbuf.so whose kernels() says what each kernel may execute")
parser:option("--select", "avxbuf.so to ask which kernels vector_zeroing=false picks (repeatable)")
  :count("*")
parser:option("--label", "name for the summary line")
parser:flag("--report", "print what was found in each kernel")
local args = parser:parse()

---------------------------------------------------------------------------
-- Instructions

-- Legacy-encoded instructions beyond x86-64's baseline (SSE3, SSSE3,
-- SSE4.1/4.2, POPCNT, LZCNT, MOVBE). tzcnt is left out: it runs as bsf on
-- older processors, which is why compilers emit it for generic targets.
local BEYOND_SSE2 = {}
for m in ([[addsubps addsubpd haddps haddpd hsubps hsubpd lddqu movddup movshdup movsldup fisttp
  monitor mwait pabsb pabsw pabsd palignr phaddw phaddd phaddsw phsubw phsubd phsubsw pmaddubsw
  pmulhrsw pshufb psignb psignw psignd blendpd blendps blendvpd blendvps dppd dpps extractps
  insertps movntdqa mpsadbw packusdw pblendvb pblendw pcmpeqq pextrb pextrd pextrq phminposuw
  pinsrb pinsrd pinsrq pmaxsb pmaxsd pmaxud pmaxuw pminsb pminsd pminud pminuw pmovsxbw pmovsxbd
  pmovsxbq pmovsxwd pmovsxwq pmovsxdq pmovzxbw pmovzxbd pmovzxbq pmovzxwd pmovzxwq pmovzxdq
  pmuldq pmulld ptest roundps roundpd roundss roundsd pcmpestri pcmpestrm pcmpistri pcmpistrm
  pcmpgtq crc32 popcnt lzcnt movbe]]):gmatch("%S+") do BEYOND_SSE2[m] = true end

-- VEX instructions that need AVX2 whatever their width; besides these, any
-- vp* instruction on ymm registers is AVX2 (AVX has no 256-bit integer
-- operations) except the four AVX ones listed in AVX_VP_YMM.
local AVX2_ONLY = {}
for m in ([[vpbroadcastb vpbroadcastw vpbroadcastd vpbroadcastq vbroadcasti128 vinserti128
  vextracti128 vperm2i128 vpermq vpermd vpermps vpermpd vpblendd vpmaskmovd vpmaskmovq vpsllvd
  vpsllvq vpsrlvd vpsrlvq vpsravd vgatherdps vgatherdpd vgatherqps vgatherqpd vpgatherdd
  vpgatherdq vpgatherqd vpgatherqq]]):gmatch("%S+") do AVX2_ONLY[m] = true end
local AVX_VP_YMM = { vptest = true, vpermilps = true, vpermilpd = true, vperm2f128 = true }

-- VEX-encoded instructions of other extensions (general-purpose BMI, FMA, F16C).
local VEX_OTHER = {}
for m in ([[andn bextr blsi blsmsk blsr bzhi mulx pdep pext rorx sarx shlx shrx vcvtph2ps
  vcvtps2ph]]):gmatch("%S+") do VEX_OTHER[m] = true end

local NT_STORES = { movntdq = true, movntps = true, movntpd = true, movnti = true, movntq = true,
  maskmovdqu = true, vmovntdq = true, vmovntps = true, vmovntpd = true, vmaskmovdqu = true }

local PREFIX_WORDS = { rep = true, repz = true, repe = true, repnz = true, repne = true,
  lock = true, notrack = true, bnd = true, data16 = true, addr32 = true,
  cs = true, ds = true, es = true, ss = true, fs = true, gs = true }

local LEGACY_PREFIX_BYTES = { ["66"] = true, ["67"] = true, ["f2"] = true, ["f3"] = true,
  ["2e"] = true, ["36"] = true, ["3e"] = true, ["26"] = true, ["64"] = true, ["65"] = true,
  ["f0"] = true }

-- The encoding from the raw bytes: VEX starts with c4/c5 and EVEX with 62
-- (in 64-bit mode both are unambiguous), after any legacy prefixes.
local function encoding(bytes)
  for b in bytes:gmatch("%x%x") do
    if not LEGACY_PREFIX_BYTES[b] then
      if b == "c4" or b == "c5" then return "vex" end
      if b == "62" then return "evex" end
      if b == "8f" then return "legacy" end   -- XOP would need a closer look; none is expected
      return "legacy"
    end
  end
  return "legacy"
end

local function decode(addr, bytes, text)
  local words = {}
  for w in text:gmatch("%S+") do words[#words + 1] = w end
  local k = 1
  while words[k] and PREFIX_WORDS[words[k]] do k = k + 1 end
  local mnemonic = words[k] or ""
  local operands = table.concat(words, " ", k + 1)
  local ins = { addr = addr, text = text, mnemonic = mnemonic, operands = operands,
                enc = encoding(bytes), width = 0, hi16 = false, lo_wide = false }
  for kind, num in operands:gmatch("%%([xyz])mm(%d+)") do
    local w = kind == "x" and 128 or kind == "y" and 256 or 512
    if w > ins.width then ins.width = w end
    if w >= 256 then
      if tonumber(num) >= 16 then ins.hi16 = true else ins.lo_wide = true end
    end
  end
  if operands:find("%%k%d") then ins.enc = "evex" end
  -- control flow
  if mnemonic == "ret" or mnemonic == "retq" then
    ins.flow = "ret"
  elseif mnemonic == "jmp" or mnemonic == "jmpq" then
    ins.flow = "jmp"
    ins.target = not operands:find("^%*") and tonumber(operands:match("^(%x+)"), 16) or nil
  elseif mnemonic:match("^j%a+$") or mnemonic:match("^loop") then
    ins.flow = "jcc"
    ins.target = tonumber(operands:match("^(%x+)"), 16)
  elseif mnemonic == "call" or mnemonic == "callq" then
    ins.flow = "call"
  elseif mnemonic == "ud2" or mnemonic == "hlt" or mnemonic == "int3" then
    ins.flow = "stop"
  end
  return ins
end

-- The feature class an instruction needs beyond x86-64 ("avx", "avx2", "evex", "other"), or nil.
local function isa_class(ins)
  local m = ins.mnemonic
  if ins.enc == "evex" then return "evex" end
  if ins.enc == "vex" then
    if VEX_OTHER[m] or m:match("^vfn?m") then return "other" end
    if AVX2_ONLY[m] then return "avx2" end
    if ins.width == 256 and m:match("^vp") and not AVX_VP_YMM[m] then return "avx2" end
    if (m == "vbroadcastss" or m == "vbroadcastsd") and ins.operands:match("^%%xmm") then return "avx2" end
    if m == "vmovntdqa" and ins.width == 256 then return "avx2" end
    return "avx"
  end
  if BEYOND_SSE2[m] then return "sse3+" end
  return nil
end

-- What a function limited to these features may use.
local function allowance(isa_words)
  local a = { ["sse3+"] = false, avx = false, avx2 = false, evex = false, other = false }
  for _, w in ipairs(isa_words) do
    if w == "avx" or w == "avx2" or w:match("^avx512") then a["sse3+"], a.avx = true, true end
    if w == "avx2" or w:match("^avx512") then a.avx2 = true end
    if w:match("^avx512") then a.evex = true end
  end
  return a
end

local CLASS_TEXT = {
  ["sse3+"] = "an instruction beyond SSE2 (SSE3 to SSE4.2, POPCNT, LZCNT, MOVBE)",
  avx = "a VEX-encoded (AVX) instruction",
  avx2 = "an AVX2-only instruction",
  evex = "an EVEX-encoded (AVX-512) instruction",
  other = "an instruction of an extension no kernel declares (BMI, FMA, F16C)",
}

---------------------------------------------------------------------------
-- Disassembly

local function sh(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- The functions of a file, in address order: {name, insns = {...}}.
local function disassemble(file)
  local p = assert(io.popen("objdump -d -r -w " .. sh(file) .. " 2>&1"))
  local out = p:read("a")
  local ok = p:close()
  if not ok or not out:find("Disassembly of section") then
    error("objdump failed on " .. file .. ":\n" .. out:sub(1, 400), 0)
  end
  local order, cur, last = {}, nil, nil
  for line in out:gmatch("[^\n]+") do
    local start, name = line:match("^(%x+) <(.-)>:$")
    if start then
      cur = { name = name, insns = {} }
      order[#order + 1] = cur
      last = nil
    elseif cur then
      local addr, bytes, text = line:match("^%s*(%x+):\t([%x ]+)\t(.*)$")
      if addr then
        last = decode(tonumber(addr, 16), bytes, text)
        cur.insns[#cur.insns + 1] = last
      elseif last and line:match("^%s*%x+: R_X86_64_") then
        -- a relocated operand (relocatable objects): the branch leaves for an unknown target
        last.target = nil
      end
    end
  end
  return order
end

---------------------------------------------------------------------------
-- Kernels: which functions, and what they may do

local function load_module(path)
  local open, err = package.loadlib(path, "luaopen_avxbuf")
  if not open then error("cannot load " .. path .. ": " .. tostring(err), 0) end
  return open()
end

-- The function name (without a compiler's .suffix and an avxbuf_ prefix)
-- of kernel functions: "<kernel>_copy" / "_fill" / "_find" / "_rfind";
-- "<kernel>_find_vec" and "_rfind_vec", the vector half of a search, which
-- hands the rest to the C library, belong to their search, and
-- "<kernel>_copy_skew32" and "<kernel>_copy_large" to its copy.
local function base_name(name)
  return (name:gsub("%..*$", ""):gsub("^avxbuf_", ""):gsub("_(r?find)_vec$", "_%1"):gsub("_copy_skew32$", "_copy")
              :gsub("_copy_large$", "_copy"))
end

---------------------------------------------------------------------------
-- Path analysis over one group of functions (an entry and its split parts)

-- Runs a forward "may" analysis: state[i] is the address of an instruction
-- that set the flag on some path reaching instruction i (or false). set(ins)
-- and clear(ins) say what an instruction does; at every exit (ret, tail or
-- indirect jump, and calls when calls_exit) a set flag is reported through
-- report(exit, witness).
local function paths(group, set, clear, calls_exit, report)
  local insns, index = {}, {}
  for _, f in ipairs(group) do
    for _, ins in ipairs(f.insns) do insns[#insns + 1] = ins end
  end
  table.sort(insns, function(a, b) return a.addr < b.addr end)
  for i, ins in ipairs(insns) do index[ins.addr] = i end
  local state, work, queued = {}, {}, {}
  -- every function of the group starts clean
  for _, f in ipairs(group) do
    if f.insns[1] then
      local i = index[f.insns[1].addr]
      state[i] = false; queued[i] = true; work[#work + 1] = i
    end
  end
  local reported = {}
  while #work > 0 do
    local i = table.remove(work)
    queued[i] = nil
    local ins = insns[i]
    local s = state[i]
    if clear(ins) then s = false elseif not s and set(ins) then s = ins.addr end
    local inside = ins.target and index[ins.target]
    local exit = ins.flow == "ret" or (calls_exit and ins.flow == "call")
              or (ins.flow == "jmp" and not inside) or (ins.flow == "jcc" and not inside)
    if exit and s and not reported[ins.addr] then
      reported[ins.addr] = true
      report(ins, s)
    end
    local succ = {}
    if ins.flow == "jmp" then
      succ[1] = inside
    elseif ins.flow == "jcc" then
      succ[1], succ[2] = inside, i + 1
    elseif ins.flow ~= "ret" and ins.flow ~= "stop" then
      succ[1] = i + 1   -- calls return here
    end
    for _, j in pairs(succ) do
      if j and j <= #insns then
        local old = state[j]
        if old == nil or (old == false and s) then
          state[j] = s
          if not queued[j] then queued[j] = true; work[#work + 1] = j end
        end
      end
    end
  end
end

---------------------------------------------------------------------------
-- The audit

local violations, checked_functions, checked_kernels = {}, 0, 0

local function violation(file, fname, ins, rule, why)
  violations[#violations + 1] = string.format("%s: %s at %s: %s: %s -- %s", file, fname,
    ins and string.format("0x%x", ins.addr) or "-", rule, ins and ins.text or "-", why)
end

local function touches_wide(ins) return ins.lo_wide end
local function is_vzeroupper(ins) return ins.mnemonic == "vzeroupper" or ins.mnemonic == "vzeroall" end
local function is_nt(ins) return NT_STORES[ins.mnemonic] == true end
local function is_sfence(ins) return ins.mnemonic == "sfence" or ins.mnemonic == "mfence" end

-- Widest register, streaming stores and ISA use of a list of functions.
local function scan(file, funcs, allowed, limit_bits, what, mnemonics)
  local widest, nt = 0, false
  for _, f in ipairs(funcs) do
    for _, ins in ipairs(f.insns) do
      if ins.width > widest then widest = ins.width end
      if mnemonics and (ins.width > 0 or ins.enc ~= "legacy" or is_nt(ins) or is_sfence(ins)
                        or ins.text:match("^rep")) then
        mnemonics[(ins.text:match("^rep%S* %S+") or ins.mnemonic)] = true
      end
      if is_nt(ins) then nt = true end
      local class = isa_class(ins)
      if class and not allowed[class] then
        violation(file, f.name, ins, "isa", string.format("%s in %s", CLASS_TEXT[class], what))
      end
      if limit_bits and ins.width > limit_bits then
        violation(file, f.name, ins, "isa",
                  string.format("a %d-bit register in %s limited to %d bits", ins.width, what, limit_bits))
      end
      if ins.hi16 and (limit_bits or 0) < 512 then
        violation(file, f.name, ins, "upper",
                  "registers 16-31 at 256/512 bits outside the 512-bit family: vzeroupper does not clean them")
      end
    end
  end
  return widest, nt
end

local function check_paths(file, group)
  -- a callee must not start with a dirty upper state
  paths(group, touches_wide, is_vzeroupper, true, function(exit, witness)
    violation(file, group[1].name, exit, "upper", string.format(
      "reached with the upper state dirty (by the instruction at 0x%x) and no vzeroupper", witness))
  end)
  -- streams must be fenced before the kernel returns; a call (clang -O0
  -- copies vector temporaries with memcpy) comes back before that
  paths(group, is_nt, is_sfence, false, function(exit, witness)
    violation(file, group[1].name, exit, "fence",
              string.format("reached after a non-temporal store (at 0x%x) without an sfence", witness))
  end)
end

local function zeroing_kernels(select_paths)
  local picked = {}   -- kernel name -> an example "zero of N bytes at use_avx=L"
  for _, path in ipairs(select_paths) do
    local avxbuf = load_module(path)
    for level = 0, 3 do
      for _, mvs in ipairs { 16, 32, 64 } do
        avxbuf.reset()
        avxbuf.configure { use_avx = level, max_vector_size = mvs, vector_zeroing = false }
        local cfg = avxbuf.config()
        local sizes = { 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 255, 256, 1000, 4095, 4096, 4097,
                        65536, 1 << 20, 1 << 24, 1 << 28, 1 << 32 }
        for _, k in ipairs { "avx3_threshold", "rep_stosb_threshold", "rep_stosb_stop_threshold",
                             "nontemporal_threshold",
                             "memset_nontemporal_threshold", "zero_nontemporal_threshold" } do
          local t = cfg[k]
          for _, n in ipairs { t - 1, t, t + 1, 2 * t - 1, 2 * t, 2 * t + 1 } do
            if n > 0 then sizes[#sizes + 1] = n end
          end
        end
        for _, op in ipairs { "zero", "fill" } do
          for _, n in ipairs(sizes) do
            local name = avxbuf.kernel(op, n)
            picked[name] = picked[name] or string.format(
              "%s of %d bytes at use_avx=%d max_vector_size=%d (%s)", op, n, cfg.use_avx, cfg.max_vector_size, path)
          end
        end
      end
    end
    avxbuf.reset()
  end
  return picked
end

local kernels_from = args.kernels_from or args.files[1]
local CHAINS = { chain_add = "add", chain_imul = "imul" }
local kernel_list = load_module(kernels_from).kernels()
local select_paths = #args.select > 0 and args.select or { kernels_from }
local zeroing = zeroing_kernels(select_paths)
local report_lines = {}

for _, file in ipairs(args.files) do
  local order = disassemble(file)
  -- group kernel functions: "<kernel>_<op>" -> list of functions
  local groups, in_kernel = {}, {}
  for _, f in ipairs(order) do
    local base = base_name(f.name)
    groups[base] = groups[base] or {}
    table.insert(groups[base], f)
  end
  for _, k in ipairs(kernel_list) do
    local allowed = allowance(k.isa)
    local what = string.format("kernel %s (isa: %s)", k.name,
                               #k.isa > 0 and table.concat(k.isa, " ") or "none")
    local widest, nt, found, mnemonics = 0, false, {}, {}
    for _, op in ipairs { "copy", "fill", "find", "rfind" } do
      local group = groups[k.name .. "_" .. op]
      if group then
        -- an entry point first, then the parts split off it
        table.sort(group, function(a, b) return #a.name < #b.name end)
        for _, f in ipairs(group) do
          in_kernel[f] = true
          -- the entry points, which the descriptor's pointers call: op's, and the copy's copy_large
          local bare = f.name:gsub("^avxbuf_", "")
          local entry = f.insns[1]
          if (bare == k.name .. "_" .. op or op == "copy" and bare == k.name .. "_copy_large")
             and entry and entry.addr % 64 ~= 0 then
            violation(file, f.name, entry, "align",
                      string.format("a kernel entry point at %d past a 64-byte boundary", entry.addr % 64))
          end
        end
        found[#found + 1] = group[1].name
        checked_functions = checked_functions + #group
        local w, has_nt = scan(file, group, allowed, k.vector_bits ~= nil and math.max(k.vector_bits, 128) or 128,
                               what, mnemonics)
        if w > widest then widest = w end
        nt = nt or has_nt
        check_paths(file, group)
        if k.streaming and not has_nt then
          violation(file, group[1].name, group[1].insns[1], "streaming",
                    "a streaming kernel's entry point without any non-temporal store")
        elseif not k.streaming and has_nt then
          for _, f in ipairs(group) do
            for _, ins in ipairs(f.insns) do
              if is_nt(ins) then
                violation(file, f.name, ins, "streaming", "a non-temporal store in a temporal kernel")
              end
            end
          end
        end
        local example = op == "fill" and zeroing[k.name]
        if example and w > 128 then
          violation(file, group[1].name, group[1].insns[1], "zeroing",
                    string.format("vector_zeroing=false picks %s for %s, and its fill touches %d-bit registers",
                                  k.name, example, w))
        end
      end
    end
    if #found > 0 then
      checked_kernels = checked_kernels + 1
      if k.vector_bits and widest ~= k.vector_bits then
        violation(file, found[1], nil, "agree",
                  string.format("kernels() says %s touches %d-bit registers at most; its code's widest is %d",
                                k.name, k.vector_bits, widest))
      end
      local used = {}
      for m in pairs(mnemonics) do used[#used + 1] = m end
      table.sort(used)
      report_lines[#report_lines + 1] = string.format("%-14s %-26s widest %3d  streaming %-5s  %s: %s",
        k.name, table.concat(k.isa, " "), widest, tostring(nt), table.concat(found, ", "), table.concat(used, " "))
    elseif file == kernels_from then
      violation(file, k.name .. "_copy/_fill", nil, "agree",
                "kernels() lists " .. k.name .. " but no function of it is in this file")
    end
  end
  for name in pairs(zeroing) do
    if file == kernels_from and not groups[name .. "_fill"] then
      violation(file, name .. "_fill", nil, "zeroing",
                "vector_zeroing=false picks " .. name .. ", whose fill is not in this file")
    end
  end
  -- the clock probe's chains
  local chains = {}
  for _, f in ipairs(order) do
    local op = CHAINS[base_name(f.name)]
    if op then checked_functions = checked_functions + 1 end
    for _, ins in ipairs(op and f.insns or {}) do
      if ins.width > 0 then violation(file, f.name, ins, "probe", "a vector register in the clock probe") end
    end
    -- the loop is in the entry point (a part split off it has none)
    if op and not f.name:find("%.") then
      chains[base_name(f.name)] = true
      local loops = {}
      for _, ins in ipairs(f.insns) do
        if ins.flow == "jcc" and ins.target and ins.target < ins.addr then loops[#loops + 1] = ins end
      end
      if #loops ~= 1 then
        violation(file, f.name, f.insns[1], "probe", #loops .. " backward branches: the chain is one loop")
      else
        local count, dests = 0, {}
        for _, ins in ipairs(f.insns) do
          if ins.addr >= loops[1].target and ins.addr <= loops[1].addr then
            if ins.operands:find("%(") then
              violation(file, f.name, ins, "probe", "a memory access inside the chain's loop")
            end
            if ins.mnemonic:match("^" .. op .. "[lq]?$") then
              count = count + 1
              dests[ins.operands:match("(%%%w+)%s*$") or "?"] = true
            end
          end
        end
        local n_dests = 0
        for _ in pairs(dests) do n_dests = n_dests + 1 end
        if count ~= 16 then
          violation(file, f.name, loops[1], "probe", string.format("the loop holds %d %s, not 16", count, op))
        elseif n_dests ~= 1 then
          violation(file, f.name, loops[1], "probe",
                    string.format("the loop's %s write %d registers: not one dependent chain", op, n_dests))
        end
      end
    end
  end
  if file == kernels_from and kernel_list[1] and kernel_list[1].isa then
    for name in pairs(CHAINS) do
      if not chains[name] and load_module(kernels_from).cpu().x86 then
        violation(file, name, nil, "probe", "the clock probe's chain is not in this file")
      end
    end
  end
  -- everything else: x86-64 baseline
  local others = {}
  for _, f in ipairs(order) do
    if not in_kernel[f] and not f.name:find("@plt") then others[#others + 1] = f end
  end
  checked_functions = checked_functions + #others
  scan(file, others, allowance {}, 128, "code outside the kernels")
  for _, f in ipairs(others) do check_paths(file, { f }) end
end

if args.report then
  for _, line in ipairs(report_lines) do print(line) end
end
for _, v in ipairs(violations) do print(v) end
print(string.format("audit%s: %d files, %d kernels, %d functions checked: %d violations",
                    args.label and (" " .. args.label) or "", #args.files, checked_kernels,
                    checked_functions, #violations))
os.exit(#violations == 0 and 0 or 1)
