-- Every kernel this build can run, and the knobs that make avxbuf use it at
-- every size: for specs that test each kernel and benchmarks that time them.
local M = {}

local family = { [0] = "sse2", "avx", "avx2", "avx512" }

-- Thresholds off, so one family serves every size.
local function only(knobs)
  local t = { avx3_threshold = 0, rep_movsb_threshold = 0, rep_stosb_threshold = 0,
              nontemporal_threshold = 0 }
  for k, v in pairs(knobs) do t[k] = v end
  return t
end

-- {name, knobs, copy = kernel name for copies, fill = for zero/fill (n >= 1)}
function M.list(avxbuf)
  local max = avxbuf.emulated and 3 or avxbuf.cpu().max_use_avx
  local list = {}
  local function add(name, knobs, copy, fill)
    list[#list + 1] = { name = name, knobs = knobs, copy = copy, fill = fill or copy }
  end
  if not avxbuf.cpu().x86 then   -- other architectures: the C library only
    add("libc", { kernel = "libc" }, "libc")
    return list
  end
  for level = 0, max do
    local f = family[level]
    add(f, only { use_avx = level }, f)
    add(f .. "_nt", only { use_avx = level, nontemporal_threshold = 1 }, f .. "_nt")
  end
  if max == 3 then
    add("avx512_256", only { use_avx = 3, max_vector_size = 32 }, "avx512_256")
    add("avx512_256_nt", only { use_avx = 3, max_vector_size = 32, nontemporal_threshold = 1 },
        "avx512_256_nt")
  end
  if avxbuf.cpu().features.erms then
    add("rep", only { rep_movsb_threshold = 1, rep_stosb_threshold = 1 }, "rep_movsb", "rep_stosb")
  end
  add("libc", { kernel = "libc" }, "libc")
  return list
end

return M
