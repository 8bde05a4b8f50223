-- The edge's gate, shared by admit.lua and rate-limit.lua (included at load time): the
-- revocation-epoch check and the plan's fixed one-minute windows of requests and tokens.

-- The account's epoch differs from the one the caller's cached principal was filled under (an
-- empty `expected` skips the check: the principal is fresh from key-service).
local function stale(key, expected)
  return expected ~= '' and (redis.call('GET', key) or '0') ~= expected
end

-- Reads the windows and refuses a request that would pass either limit, counting nothing.
local function rate_check(rkey, tkey, request_limit, token_limit, cost)
  local requests = tonumber(redis.call('GET', rkey) or '0')
  local tokens = tonumber(redis.call('GET', tkey) or '0')
  if requests + 1 > request_limit then return 'requests', requests, tokens end
  if cost > 0 and tokens + cost > token_limit then return 'tokens', requests, tokens end
  return '', requests, tokens
end

-- Counts an admitted request in the windows.
local function rate_count(rkey, tkey, cost)
  redis.call('INCR', rkey)
  redis.call('EXPIRE', rkey, 120)
  if cost > 0 then
    redis.call('INCRBY', tkey, cost)
    redis.call('EXPIRE', tkey, 120)
  end
end
