-- Reservation sets, shared by admit.lua, settle.lua and restore.lua (included at load time).
-- Each set is a hash (request id -> nano-credits), a running total and a sorted set of expiry
-- times, so a reservation costs O(log n) however many are open; expired ones (requests whose usage
-- event never came) are swept a few at a time.

-- Drops request `id`'s reservation; answers its amount (nil when there was none).
local function drop(hash, total, expiries, id)
  local amount = redis.call('HGET', hash, id)
  if amount then
    redis.call('DECRBY', total, amount)
    redis.call('HDEL', hash, id)
  end
  redis.call('ZREM', expiries, id)
  return amount
end

-- Drops the expired reservations (at most 16) and answers the set's total.
local function sweep(hash, total, expiries, now)
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', expiries, '-inf', now, 'LIMIT', 0, 16)) do
    drop(hash, total, expiries, id)
  end
  return tonumber(redis.call('GET', total) or '0')
end

-- Holds `cost` for request `id` until `expires`; the set's keys outlive the longest reservation.
local function hold(hash, total, expiries, id, cost, expires, ttl)
  redis.call('HSET', hash, id, cost)
  redis.call('INCRBY', total, cost)
  redis.call('ZADD', expiries, expires, id)
  for _, key in ipairs({hash, total, expiries}) do redis.call('PEXPIRE', key, ttl * 2) end
end
