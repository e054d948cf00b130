-- Release the lock only while it still holds this grant's token: a holder whose lock
-- expired must not delete the next holder's.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
