-- Puts back a reservation Redis lost (the edge still has its request in flight): held as admit.lua
-- holds it, without checking anything (it was admitted already), and only if it is not there yet
-- and was not settled in the last minutes.
-- KEYS and ARGV: see BudgetStore.restore (budget-store.ts), the one place that sends them.
local resv, resv_total, resv_expiries = KEYS[1], KEYS[2], KEYS[3]
local kresv, kresv_total, kresv_expiries, settled = KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local id, cost, expires, now, has_key = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5] == '1'

local function put(hash, total, expiries, ttl)
  if redis.call('HSETNX', hash, id, cost) == 0 then return end
  redis.call('INCRBY', total, cost)
  redis.call('ZADD', expiries, expires, id)
  for _, key in ipairs({hash, total, expiries}) do
    if redis.call('PTTL', key) < ttl * 2 then redis.call('PEXPIRE', key, ttl * 2) end
  end
end

-- Settled since the edge admitted it (the settlement reached Redis before this): nothing to put back.
if redis.call('ZSCORE', settled, id) then return 0 end
local ttl = math.max(expires - now, 1000)
put(resv, resv_total, resv_expiries, ttl)
if has_key then put(kresv, kresv_total, kresv_expiries, ttl) end
return 1
