// Lua run atomically inside Redis. Every key a script touches shares the hash tag {events}, so
// the scripts also work on a Redis Cluster (all keys land in one slot).

export interface RedisKeys {
  stream: string;
  pending: string;
  dedupe(workspaceId: string, clientEventId: string): string;
}

export function redisKeys(prefix: string): RedisKeys {
  const base = `${prefix}{events}`;
  return {
    stream: `${base}:stream`,
    pending: `${base}:pending`,
    dedupe: (workspaceId, clientEventId) => `${base}:dedupe:${workspaceId}:${clientEventId}`,
  };
}

export const CONSUMER_GROUP = 'drainers';

/**
 * Append with de-duplication, all or nothing with respect to other clients:
 *   KEYS[1] stream, KEYS[2] pending counter, KEYS[3..] the distinct dedupe keys of the request
 *   ARGV[1] max pending, ARGV[2] dedupe TTL in seconds, then per event: key index (0 = none), JSON
 * Returns "F<pending>" when the buffer is above the limit (nothing written), otherwise one
 * character per event: "1" appended, "0" a repeat of a key already seen.
 *
 * The order matters because Redis never rolls a script back: keys are only read before the
 * XADD, and set after it. Should a write fail half-way, an event may be buffered without its
 * key (a retry then buffers it again and the events table's unique index keeps one), but a key
 * is never set for an event that was not buffered, which would lose it.
 */
export const APPEND_SCRIPT = `
local pending = tonumber(redis.call('GET', KEYS[2]) or '0')
if pending > tonumber(ARGV[1]) then return 'F' .. pending end
local count = (#ARGV - 2) / 2
local flags, accepted, seen = {}, {}, {}
for i = 1, count do
  local keyIndex = tonumber(ARGV[1 + 2 * i])
  local fresh = true
  if keyIndex > 0 then
    if seen[keyIndex] or redis.call('EXISTS', KEYS[keyIndex]) == 1 then fresh = false end
    seen[keyIndex] = true
  end
  if fresh then
    accepted[#accepted + 1] = ARGV[2 + 2 * i]
    flags[i] = '1'
  else
    flags[i] = '0'
  end
end
if #accepted > 0 then
  redis.call('XADD', KEYS[1], '*', 'n', #accepted, 'events', '[' .. table.concat(accepted, ',') .. ']')
  redis.call('INCRBY', KEYS[2], #accepted)
  for i = 1, count do
    local keyIndex = tonumber(ARGV[1 + 2 * i])
    if keyIndex > 0 and flags[i] == '1' then redis.call('SET', KEYS[keyIndex], '1', 'EX', ARGV[2]) end
  end
end
return table.concat(flags)
`;

/**
 * Acknowledges drained entries once their events are committed to the database:
 *   KEYS[1] stream, KEYS[2] pending counter; ARGV[1] group, then per entry: id, event count.
 * Only an entry this call actually acknowledged lowers the counter, so an entry drained twice
 * (its first drainer died after committing) is counted down once.
 */
export const ACK_SCRIPT = `
local done = 0
for i = 2, #ARGV, 2 do
  if redis.call('XACK', KEYS[1], ARGV[1], ARGV[i]) == 1 then
    redis.call('XDEL', KEYS[1], ARGV[i])
    done = done + tonumber(ARGV[i + 1])
  end
end
if done > 0 then redis.call('DECRBY', KEYS[2], done) end
return done
`;
