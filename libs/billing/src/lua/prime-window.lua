-- Primes a budget window from the ledger unless it is there: its buckets (ARGV[2..]: member,
-- expiry, amount), with what was settled while it was absent (its `:late` hash: `member|expiry` ->
-- amount) added, as prime.lua does for the other figures.
-- KEYS and ARGV: see BudgetStore.primeWindows (budget-store.ts), the one place that sends them.
--#include windows
local hash, expiries, late = KEYS[1], KEYS[2], KEYS[3]
local ttl_ms = ARGV[1]

if redis.call('EXISTS', hash) == 1 then return 0 end
redis.call('DEL', expiries)
redis.call('HSET', hash, 't', 0)
for index = 2, #ARGV, 3 do
  window_add(hash, expiries, ARGV[index], ARGV[index + 1], ARGV[index + 2])
end
local settled = redis.call('HGETALL', late)
for index = 1, #settled, 2 do
  local member, expiry = string.match(settled[index], '^(%d+)|(%d+)$')
  if member then window_add(hash, expiries, member, expiry, settled[index + 1]) end
end
redis.call('DEL', late)
redis.call('PEXPIRE', hash, ttl_ms)
redis.call('PEXPIRE', expiries, ttl_ms)
return 1
