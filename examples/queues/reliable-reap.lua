-- Put back in line every task taken longer ago than the visibility timeout: its worker
-- died or stalled. A task with no time yet (its worker died between the two commands of
-- dequeue, which one script cannot do) would get one here.
local now, visibility = tonumber(ARGV[1]), tonumber(ARGV[2])
local requeued = 0
for _, e in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
  local at = tonumber(redis.call('HGET', KEYS[3], e))
  if at == nil then
    redis.call('HSET', KEYS[3], e, now)
  elseif now - at > visibility then
    if redis.call('LREM', KEYS[2], 1, e) > 0 then
      redis.call('HDEL', KEYS[3], e)
      redis.call('RPUSH', KEYS[1], e)
      requeued = requeued + 1
    end
  end
end
return requeued
