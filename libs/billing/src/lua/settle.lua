-- Drops a request's reservations and, for a settled request, moves the cached balance and key
-- spend by its real cost, once: only while the account's reservation is still there, so settling
-- the same request again (a redelivered usage event) changes nothing. Without a reservation (one
-- released or expired) the cached figures catch up when they are next loaded from the ledger.
-- A figure that is absent (expired, not primed yet) keeps the cost in its `:late` key for a while
-- (ARGV[4] ms), and the prime adds it: a prime that read the ledger before this request was written
-- and writes its figure after this settlement would otherwise leave it out until the figure next
-- expires (a request counted twice for a minute at worst, never not at all).
-- A proxy key's budget windows (KEYS[12..]: hash, expiry set and `:late` hash each; ARGV[6..]: the
-- bucket the charge counts in and when it stops counting) take the cost the same way.
-- KEYS and ARGV: see BudgetStore.settle (budget-store.ts), the one place that sends them.
--#include reservations
--#include windows
local balance_key, resv, resv_total, resv_expiries = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local spend_key, kresv, kresv_total, kresv_expiries = KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local balance_late, spend_late, settled = KEYS[9], KEYS[10], KEYS[11]
-- ARGV[3]: '0' no key figures, '1' a proxy key's, '2' a DevPass key's token windows (no credits:
-- only its reservation, in tokens, is dropped and its windows take the tokens).
local id, cost, key_mode, late_ms, settled_ms = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local has_key, tokens_mode = key_mode == '1', key_mode == '2'

local function move(figure, late, op)
  if redis.call('EXISTS', figure) == 1 then
    redis.call(op, figure, cost)
  else
    redis.call(op, late, cost)
    redis.call('PEXPIRE', late, late_ms)
  end
end

-- Remembered for a while, so that an edge putting back its reservations in flight after a failover
-- (restore.lua) does not put back one that was settled meanwhile.
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
redis.call('ZADD', settled, now, id)
redis.call('ZREMRANGEBYSCORE', settled, '-inf', now - settled_ms)
redis.call('PEXPIRE', settled, settled_ms)

local reserved
if tokens_mode then
  reserved = drop(kresv, kresv_total, kresv_expiries, id)
else
  reserved = drop(resv, resv_total, resv_expiries, id)
  if has_key then drop(kresv, kresv_total, kresv_expiries, id) end
end
if reserved and tonumber(cost) > 0 then
  if not tokens_mode then move(balance_key, balance_late, 'DECRBY') end
  if has_key then move(spend_key, spend_late, 'INCRBY') end
  for index = 12, #KEYS, 3 do
    local window = (index - 12) / 3
    local member, expiry = ARGV[6 + window * 2], ARGV[7 + window * 2]
    local hash, expiries, window_late = KEYS[index], KEYS[index + 1], KEYS[index + 2]
    if redis.call('EXISTS', hash) == 1 then
      window_add(hash, expiries, member, expiry, cost)
      local hash_ttl = redis.call('PTTL', hash)
      if hash_ttl > 0 then redis.call('PEXPIRE', expiries, hash_ttl) end
    else
      redis.call('HINCRBY', window_late, member .. '|' .. expiry, cost)
      redis.call('PEXPIRE', window_late, late_ms)
    end
  end
end
return 1
