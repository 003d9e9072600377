-- A raw CPUID dump as `cpuid -r` (Debian's cpuid) prints it, as
-- avxbuf.decide{leaves = ...} takes it: leaves[leaf][subleaf] = {eax, ebx,
-- ecx, edx}, of the first CPU listed. Plain Lua 5.1 (the specs run on every
-- version).
return function(text)
  local leaves = {}
  for line in text:gmatch("[^\n]+") do
    if line:match("^CPU %d+:") and next(leaves) then break end
    local leaf, sub, a, b, c, d = line:match("(0x%x+) (0x%x+): eax=(0x%x+) ebx=(0x%x+) ecx=(0x%x+) edx=(0x%x+)")
    if leaf then
      leaf, sub = tonumber(leaf), tonumber(sub)
      leaves[leaf] = leaves[leaf] or {}
      leaves[leaf][sub] = { tonumber(a), tonumber(b), tonumber(c), tonumber(d) }
    end
  end
  return leaves
end
