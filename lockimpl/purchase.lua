-- Buys one unit: KEYS[1] is the stock counter, KEYS[2] the orders list, ARGV[1] the buyer.
-- Returns the units left after the sale, or -1 when none was left to sell.
local left = tonumber(redis.call('GET', KEYS[1]) or '0')
if left <= 0 then
  return -1
end
left = redis.call('DECR', KEYS[1])
redis.call('RPUSH', KEYS[2], ARGV[1])
return left
