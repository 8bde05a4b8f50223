-- Primes a cached figure from the ledger unless it is there, with what was settled while it was
-- absent (its `:late` key) added: those settlements may have committed after the ledger was read.
-- KEYS and ARGV: see BudgetStore.prime (budget-store.ts), the one place that sends them.
local figure, late = KEYS[1], KEYS[2]
local value, ttl_s = ARGV[1], ARGV[2]

if redis.call('EXISTS', figure) == 1 then return 0 end
redis.call('SET', figure, value, 'EX', ttl_s)
local settled = redis.call('GET', late)
if settled then
  redis.call('INCRBY', figure, settled)
  redis.call('DEL', late)
end
return 1
