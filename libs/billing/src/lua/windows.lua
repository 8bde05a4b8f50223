-- A proxy key's budget windows (budget-windows.ts), shared by admit.lua, settle.lua and
-- prime-window.lua (included at load time). Each window's spend is a hash (bucket id ->
-- nano-credits, and `t`: their total) and a sorted set of its buckets by when they stop counting;
-- a bucket that stopped counting is swept when the window is next read. The hash exists once the
-- window was primed from the ledger (`t` is always there): without it the window is cold.

-- Drops the buckets that stopped counting at `now` and answers the window's spend.
local function window_used(hash, expiries, now)
  local gone = redis.call('ZRANGEBYSCORE', expiries, '-inf', now)
  for _, member in ipairs(gone) do
    local amount = redis.call('HGET', hash, member)
    if amount then
      redis.call('HINCRBY', hash, 't', '-' .. amount)
      redis.call('HDEL', hash, member)
    end
  end
  if #gone > 0 then redis.call('ZREMRANGEBYSCORE', expiries, '-inf', now) end
  return tonumber(redis.call('HGET', hash, 't') or '0')
end

-- When the oldest bucket still counting stops (ms), or 0 with none.
local function window_oldest(expiries)
  local first = redis.call('ZRANGE', expiries, 0, 0, 'WITHSCORES')
  if first[2] then return tonumber(first[2]) end
  return 0
end

-- Counts `amount` in bucket `member`, which stops counting at `expiry`.
local function window_add(hash, expiries, member, expiry, amount)
  redis.call('HINCRBY', hash, member, amount)
  redis.call('HINCRBY', hash, 't', amount)
  redis.call('ZADD', expiries, expiry, member)
end
