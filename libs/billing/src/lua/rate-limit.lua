-- The cheaper path (routes with no reservation: not `@Metered`, no cost estimate, DevPass keys):
-- the revocation epoch, then the fixed one-minute windows of requests and tokens. A request that
-- would pass either limit is refused and counts nothing. A free poll (`@FreeSummaryPoll()` routes):
-- the first such request of a minute counts nothing and reads the windows as they stand.
-- Returns {state, requests, tokens}.
-- KEYS and ARGV: see BudgetStore.rateLimit (budget-store.ts), the one place that sends them.
--#include gate
local epoch_key, requests_key, tokens_key, free_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local expected_epoch, request_limit, token_limit, cost, free = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]

if stale(epoch_key, expected_epoch) then return {'stale', 0, 0} end
if free == '1' and redis.call('SET', free_key, '1', 'EX', 120, 'NX') then
  return {'free', tonumber(redis.call('GET', requests_key) or '0'), tonumber(redis.call('GET', tokens_key) or '0')}
end
local exceeded, requests, tokens = rate_check(requests_key, tokens_key, request_limit, token_limit, cost)
if exceeded ~= '' then return {exceeded, requests, tokens} end
rate_count(requests_key, tokens_key, cost)
return {'ok', requests + 1, tokens + cost}
