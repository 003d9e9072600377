-- Statistics for benchmarks measured in interleaved rounds: is row B
-- faster or slower than row A, and by how much, with what confidence?
--
-- Each round measures every row once, back to back, so a round's ratio
-- B/A is paired: whatever the machine did in that round hit both. On the
-- log ratios d_k = log(B_k / A_k):
--   * the estimate is the Hodges-Lehmann estimator (the median of the Walsh
--     averages (d_i + d_j) / 2, i <= j), reported as a ratio exp(HL);
--   * the confidence interval is the one that inverts the Wilcoxon
--     signed-rank test, from its exact null distribution.
-- Why this and not a bootstrap: it is exact for the 8 to 40 rounds a run
-- has, deterministic (no resampling noise between two reports of the same
-- data), and a slow round -- which a shared machine produces often -- moves a rank,
-- not the estimate. It assumes the d_k symmetric about their centre, which
-- log ratios of like workloads are close to.
-- Plain Lua 5.1 syntax: the specs run on every Lua version.
local M = {}

-- P(T+ <= c) for the signed-rank statistic of n untied observations, as a
-- table indexed by c (0 .. n(n+1)/2), from the exact distribution: every
-- subset of ranks 1..n equally likely.
local cdf_cache = {}
function M.signed_rank_cdf(n)
  if cdf_cache[n] then return cdf_cache[n] end
  local max = n * (n + 1) / 2
  local p = { [0] = 1 }
  for s = 1, max do p[s] = 0 end
  for r = 1, n do   -- add rank r: in the sum or not, with probability 1/2 each
    for s = max, 0, -1 do
      p[s] = (p[s] + (s >= r and p[s - r] or 0)) / 2
    end
  end
  local cdf, acc = {}, 0
  for s = 0, max do acc = acc + p[s]; cdf[s] = acc end
  cdf_cache[n] = cdf
  return cdf
end

-- The largest c with P(T+ <= c) <= alpha / 2, or -1 if there is none (too
-- few observations to ever reject at this level).
function M.critical_value(n, alpha)
  local cdf = M.signed_rank_cdf(n)
  local c = -1
  for s = 0, n * (n + 1) / 2 do
    if cdf[s] <= alpha / 2 + 1e-12 then c = s else break end
  end
  return c
end

local function median_of_sorted(s)
  local m = math.floor(#s / 2)
  if #s % 2 == 1 then return s[m + 1] end
  return (s[m] + s[m + 1]) / 2
end

-- The median of the list xs (left as it is), or nil when it is empty: the
-- one median of avxbuf's Lua code and of the benchmarks (bench/lib/harness.lua).
function M.median(xs)
  local s = {}
  for i, x in ipairs(xs) do s[i] = x end
  if #s == 0 then return nil end
  table.sort(s)
  return median_of_sorted(s)
end

-- Paired location shift of the d's: estimate, CI at 1 - alpha, and whether
-- the CI excludes 0.
function M.paired(d, alpha)
  alpha = alpha or 0.05
  local n = #d
  local walsh = {}
  for i = 1, n do
    for j = i, n do walsh[#walsh + 1] = (d[i] + d[j]) / 2 end
  end
  table.sort(walsh)
  local c = M.critical_value(n, alpha)
  local r = { n = n, estimate = median_of_sorted(walsh) }
  if c < 0 then
    r.lo, r.hi = -math.huge, math.huge
  else
    r.lo, r.hi = walsh[c + 1], walsh[#walsh - c]
  end
  r.significant = r.lo > 0 or r.hi < 0
  return r
end

-- Row b against row a, from per-round times (same rounds, same order):
-- {ratio = b/a, ci = {lo, hi}, significant, rounds}; no ci when there are
-- too few rounds for any interval (fewer than 6 at 95%).
function M.ratio(a, b, alpha)
  local d = {}
  for k = 1, math.min(#a, #b) do d[k] = math.log(b[k] / a[k]) end
  local r = M.paired(d, alpha)
  return { ratio = math.exp(r.estimate), ci = r.hi < math.huge and { math.exp(r.lo), math.exp(r.hi) } or nil,
           significant = r.significant, rounds = r.n }
end

-- A robust spread of xs (1.4826 x the median absolute deviation: the
-- standard deviation for normal data).
function M.robust_sd(xs)
  local m = M.median(xs)
  local dev = {}
  for i, x in ipairs(xs) do dev[i] = math.abs(x - m) end
  return 1.4826 * M.median(dev)
end

return M
