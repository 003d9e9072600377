-- lua/avxbuf/stats.lua on synthetic samples: exact critical values, a known
-- difference found, none invented, and the false-positive rate it promises.
local lu = require "luaunit"
local stats = require "avxbuf.stats"
local normals = require("helpers").normals

-- Per-round times of two rows whose true ratio is `ratio`, with round-to-round
-- drift (shared by both rows) and independent noise of sd `noise` (log scale).
local function rounds(n, ratio, noise, seed)
  local z = normals(seed)
  local a, b = {}, {}
  for k = 1, n do
    local drift = math.exp(0.3 * z())
    a[k] = 1.0 * drift * math.exp(noise * z())
    b[k] = ratio * drift * math.exp(noise * z())
  end
  return a, b
end

TestStats = {}

function TestStats.test_critical_values_are_the_published_ones()
  -- two-sided 0.05: tables of the Wilcoxon signed-rank test
  local table_05 = { [6] = 0, [7] = 2, [8] = 3, [9] = 5, [10] = 8, [12] = 13, [15] = 25, [20] = 52, [25] = 89,
                     [30] = 137 }
  for n, c in pairs(table_05) do lu.assertEquals(stats.critical_value(n, 0.05), c, "n = " .. n) end
  lu.assertEquals(stats.critical_value(5, 0.05), -1, "5 rounds can never reject at 5%")
  local cdf = stats.signed_rank_cdf(10)
  lu.assertAlmostEquals(cdf[55], 1, 1e-12)
  lu.assertAlmostEquals(cdf[0], 1 / 1024, 1e-15)
end

function TestStats.test_a_known_difference_is_found()
  local a, b = rounds(15, 1.15, 0.04, 7)
  local r = stats.ratio(a, b)
  lu.assertTrue(r.significant)
  lu.assertTrue(r.ci[1] < 1.15 and 1.15 < r.ci[2], string.format("CI %.3f-%.3f", r.ci[1], r.ci[2]))
  lu.assertAlmostEquals(r.ratio, 1.15, 0.05)
  local s = stats.ratio(b, a)   -- and the other way round
  lu.assertTrue(s.significant and s.ci[2] < 1)
end

function TestStats.test_no_difference_is_invented()
  local a, b = rounds(15, 1.0, 0.04, 11)
  local r = stats.ratio(a, b)
  lu.assertFalse(r.significant)
  lu.assertTrue(r.ci[1] < 1 and 1 < r.ci[2])
  -- too few rounds: never significant, and the interval says so
  local c = stats.ratio({ 1, 1, 1 }, { 2, 2, 2 })
  lu.assertFalse(c.significant)
  lu.assertNil(c.ci, "no interval from three rounds")
end

function TestStats.test_false_positives_stay_near_five_percent_and_power_is_real()
  local false_pos, found = 0, 0
  local trials = 600
  for t = 1, trials do
    local a, b = rounds(12, 1.0, 0.08, 1000 + t)
    if stats.ratio(a, b).significant then false_pos = false_pos + 1 end
    local c, d = rounds(12, 1.15, 0.08, 5000 + t)
    if stats.ratio(c, d).significant then found = found + 1 end
  end
  -- the exact test at n = 12 has size 2 * P(T+ <= 13) = 0.042
  lu.assertTrue(false_pos / trials <= 0.065, "A/A significant in " .. false_pos .. " of " .. trials)
  lu.assertTrue(false_pos / trials >= 0.02, "A/A significant in only " .. false_pos .. " of " .. trials)
  lu.assertTrue(found / trials >= 0.8, "a 15% effect was found in " .. found .. " of " .. trials)
end

function TestStats.test_robust_sd_ignores_one_wild_round()
  local xs = { 0.01, -0.02, 0.015, -0.01, 0.0, 0.02, -0.015, 5.0 }
  lu.assertTrue(stats.robust_sd(xs) < 0.05)
end
