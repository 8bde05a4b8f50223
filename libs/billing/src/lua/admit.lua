-- One round trip per metered request: the generation marker, the revocation epoch, the rate limit,
-- then the reservation, committing nothing unless all pass (a request refused for its budget counts
-- nothing against the rate limit). Without the marker Redis lost its state: 'cold-store'.
-- A proxy key's budget windows (KEYS[13..], a hash and an expiry set each; ARGV[12..] their
-- amounts, ARGV[11] the moment they are read at) must each have room for the reservation too.
-- ARGV[10] 'tokens': a DevPass key's token windows, the cost in tokens: no credits are checked or
-- held, only the key's reservation (in tokens) and its windows.
-- Returns {state, available, requests, tokens, window, left, oldest}: the rate-limit windows as they
-- stand (counted on 'ok'); for a proxy key the budget that refused it ('window': its index, 0 being
-- the spec allocation) or, admitted, the one with least left: its index, what it had left before
-- this request, and when its oldest bucket stops counting (0: none).
-- KEYS and ARGV: see BudgetStore.admit (budget-store.ts), the one place that sends them.
--#include reservations
--#include gate
--#include windows
local balance_key, resv, resv_total, resv_expiries = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local spend_key, kresv, kresv_total, kresv_expiries = KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local epoch_key, requests_key, tokens_key, generation_key = KEYS[9], KEYS[10], KEYS[11], KEYS[12]
local id, cost, now, ttl, allocation = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local expected_epoch, request_limit, token_limit, rate_cost = ARGV[6], tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])

if redis.call('EXISTS', generation_key) == 0 then return {'cold-store', 0, 0, 0} end
if stale(epoch_key, expected_epoch) then return {'stale', 0, 0, 0} end
local exceeded, requests, tokens = rate_check(requests_key, tokens_key, request_limit, token_limit, rate_cost)
if exceeded ~= '' then return {exceeded, 0, requests, tokens} end
local tokens_mode = ARGV[10] == 'tokens'
if not tokens_mode then
  local balance = redis.call('GET', balance_key)
  if not balance then return {'cold-balance', 0, requests, tokens} end
  local available = tonumber(balance) - sweep(resv, resv_total, resv_expiries, now)
  if available < cost then return {'credits', math.max(available, 0), requests, tokens} end
end
local tightest, tightest_left, tightest_oldest = 0, 0, 0
-- A negative allocation: not a proxy key (no allocation to check); a DevPass key's token windows
-- are checked without one.
if allocation >= 0 or tokens_mode then
  if not tokens_mode then
    local used = redis.call('GET', spend_key)
    if not used then return {'cold-allocation', 0, requests, tokens} end
  end
  for index = 13, #KEYS, 2 do
    if redis.call('EXISTS', KEYS[index]) == 0 then return {'cold-allocation', 0, requests, tokens} end
  end
  local reserved = sweep(kresv, kresv_total, kresv_expiries, now)
  if tokens_mode then
    tightest_left = math.huge
  else
    local left = allocation - tonumber(redis.call('GET', spend_key)) - reserved
    if left < cost then return {'allocation', math.max(left, 0), requests, tokens, 0, 0, 0} end
    tightest_left = left
  end
  local window_now = tonumber(ARGV[11])
  for index = 13, #KEYS, 2 do
    local window = (index - 11) / 2
    local window_left = tonumber(ARGV[11 + window]) - window_used(KEYS[index], KEYS[index + 1], window_now) - reserved
    if window_left < cost or window_left < tightest_left then
      tightest, tightest_left, tightest_oldest = window, window_left, window_oldest(KEYS[index + 1])
    end
    if window_left < cost then return {'window', math.max(window_left, 0), requests, tokens, tightest, 0, tightest_oldest} end
  end
  if tightest_left == math.huge then tightest_left = 0 end
  hold(kresv, kresv_total, kresv_expiries, id, cost, now + ttl, ttl)
end
if not tokens_mode then hold(resv, resv_total, resv_expiries, id, cost, now + ttl, ttl) end
rate_count(requests_key, tokens_key, rate_cost)
return {'ok', 0, requests + 1, tokens + rate_cost, tightest, math.max(tightest_left, 0), tightest_oldest}
