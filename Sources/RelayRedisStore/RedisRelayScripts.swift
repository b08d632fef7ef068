/// The Lua scripts the Redis store runs, and the key layout they share.
///
/// Keys (prefix `wr:`; `P` a pair id, `D` a direction, i.e. the sender's role `phone` or `watch`;
/// times in milliseconds since the Unix epoch):
/// - `wr:pairs` — sorted set: every pair id, scored by its creation time (load order).
/// - `wr:pair:P` — hash: `createdAt`, `phone.id`, `phone.name`, `phone.token`, `watch.id`,
///   `watch.name`, `watch.token` (tokens as SHA-256 hex, never the token), `phone.installed`,
///   `watch.installed` (`0` while the device's app is uninstalled, PROTOCOL.md §7.1; absent in
///   stores written before it: installed), `complications` (a counter naming complication uses).
/// - `wr:device:ID` — string: the pair id of device `ID` (an index for lookups by device).
/// - `wr:pair:P:D` — hash: `context` (the last context sent, a `deliver` as JSON),
///   `seqReserved` (seqs up to it may have been used), `order` (the acceptance counter);
///   `pending` only in stores written before `:pending` (a JSON array, read at load).
/// - `wr:pair:P:D:pending` — list: the `transferred` ids owed to the sender, oldest first
///   (appended one ack at a time, deleted when delivered).
/// - `wr:pair:P:D:queue` — sorted set: queued send ids, scored by acceptance order.
/// - `wr:pair:P:D:items` — hash: send id → `{"acceptedAt":…,"mode":…,"payload":{…}}`.
/// - `wr:pair:P:D:seqs` — hash: send id → the seq it was first sent with.
/// - `wr:pair:P:D:finished` — list: finished (acked or cancelled) send ids, most recent last,
///   at most ``finishedLimit``.
/// - `wr:pair:P:D:cancelled` — list: those of them cancelled rather than delivered, most recent
///   last, at most ``finishedLimit`` (the load keeps the ones still in `finished`).
/// - `wr:pair:P:complications` — sorted set: one member `TIME:N` per complication use, scored
///   by `TIME`; uses older than 24 h are removed on every new use and at load.
/// - `wr:pairing:wrong` — list: the wrong pairing codes that still count toward an address or
///   relay-wide lock (PROTOCOL.md §6.3), oldest first, each `COUNTS_UNTIL:AT:ADDRESS_LOCKED_UNTIL:ADDRESS`
///   (the lock empty if it locked nothing; the address last, as it may hold colons);
///   those that stopped counting are removed on every new one and at load.
/// - `wr:epoch` — string: a counter, one more per leadership (``RedisLeaderLease``): the
///   fencing token the apply script checks.
/// - `wr:leader` — string with a TTL: `NODE:EPOCH` of the node leading now.
/// - `wr:node:NODE` — pub/sub channel of a node (cluster forwarding; no key); `wr:DB:node:NODE`
///   on database DB ≠ 0, as pub/sub ignores databases.
/// - `wr:applied` — hash: store instance → the number of the last batch it applied (so a batch
///   retried after a lost reply is applied once). A cluster leader's first batch leaves only its
///   own entry (the others are fenced); a relay alone on Redis adds one entry per start.
///
/// Every batch is one `EVAL` of ``apply``: Redis runs a script atomically and, with
/// `appendonly yes` + `appendfsync always`, writes and fsyncs its effects (as one MULTI/EXEC)
/// to the append-only file before it replies. A torn tail of that file is dropped at restart
/// (`aof-load-truncated yes`), so a batch is there entirely or not at all.
enum RedisRelayScripts {
    /// The key prefix.
    static let prefix = "wr:"
    /// Finished send ids kept per direction (as in the SQLite store).
    static let finishedLimit = 1024
    /// How long a complication use counts against the budget: 24 hours, in milliseconds.
    static let complicationWindowMilliseconds: Int64 = 24 * 60 * 60 * 1000

    /// `EVAL apply 0 PREFIX INSTANCE BATCH FINISHED_LIMIT FENCE OP ARGS… OP ARGS…`; returns the
    /// number of operations applied (0 when the batch was applied before). `FENCE` is the
    /// leader's epoch (``RedisLeaderLease``) or empty: a batch whose epoch is no longer
    /// `wr:epoch` (a newer leader took over) is refused with `watchrelay: fenced`, changing nothing. Operations for a pair that
    /// is not stored change nothing (the core may race a pair's deletion).
    static let apply = #"""
        local pre = ARGV[1]
        local fence = ARGV[5]
        if fence ~= '' and redis.call('GET', pre .. 'epoch') ~= fence then
          return redis.error_reply('watchrelay: fenced: epoch ' .. fence .. ' is no longer the leader\'s')
        end
        local last = tonumber(redis.call('HGET', pre .. 'applied', ARGV[2]) or '0')
        local batch = tonumber(ARGV[3])
        if batch <= last then return 0 end
        local limit = tonumber(ARGV[4])
        local i = 6
        local function arg() local v = ARGV[i]; i = i + 1; return v end
        local function pk(p) return pre .. 'pair:' .. p end
        local function stored(p) return redis.call('EXISTS', pk(p)) == 1 end
        local function dropDevices(k)
          for _, role in ipairs({'phone', 'watch'}) do
            local id = redis.call('HGET', k, role .. '.id')
            if id then redis.call('DEL', pre .. 'device:' .. id) end
          end
        end
        -- Removes the wrong pairing codes that stopped counting by `time` (the list is short:
        -- the relay-wide lock bounds it).
        local function pruneWrong(time)
          local wk = pre .. 'pairing:wrong'
          local kept, dropped = {}, false
          for _, entry in ipairs(redis.call('LRANGE', wk, 0, -1)) do
            local ends = tonumber(string.match(entry, '^(-?%d+):'))
            if ends and ends <= time then dropped = true else table.insert(kept, entry) end
          end
          if dropped then
            redis.call('DEL', wk)
            for j = 1, #kept, 1000 do redis.call('RPUSH', wk, unpack(kept, j, math.min(j + 999, #kept))) end
          end
        end
        local wrongAt = nil
        local ops = 0
        while i <= #ARGV do
          local op = arg()
          ops = ops + 1
          if op == 'pair' then
            local p, created = arg(), arg()
            local k = pk(p)
            dropDevices(k)
            redis.call('HSET', k, 'createdAt', created)
            for _, role in ipairs({'phone', 'watch'}) do
              local id, name, token, installed = arg(), arg(), arg(), arg()
              redis.call('HSET', k, role .. '.id', id, role .. '.name', name, role .. '.token', token,
                role .. '.installed', installed)
              redis.call('SET', pre .. 'device:' .. id, p)
            end
            redis.call('ZADD', pre .. 'pairs', created, p)
          elseif op == 'delpair' then
            local p = arg()
            local k = pk(p)
            dropDevices(k)
            redis.call('DEL', k, k .. ':complications')
            for _, d in ipairs({'phone', 'watch'}) do
              local dk = k .. ':' .. d
              redis.call('DEL', dk, dk .. ':queue', dk .. ':items', dk .. ':seqs', dk .. ':finished', dk .. ':cancelled',
                dk .. ':pending')
            end
            redis.call('ZREM', pre .. 'pairs', p)
          elseif op == 'item' then
            local p, d, id, value, seq = arg(), arg(), arg(), arg(), arg()
            if stored(p) then
              local dk = pk(p) .. ':' .. d
              local n = redis.call('HINCRBY', dk, 'order', 1)
              redis.call('ZADD', dk .. ':queue', n, id)
              redis.call('HSET', dk .. ':items', id, value)
              if seq == '' then redis.call('HDEL', dk .. ':seqs', id) else redis.call('HSET', dk .. ':seqs', id, seq) end
            end
          elseif op == 'seq' then
            local p, d, id, seq = arg(), arg(), arg(), arg()
            local dk = pk(p) .. ':' .. d
            if redis.call('HEXISTS', dk .. ':items', id) == 1 then redis.call('HSET', dk .. ':seqs', id, seq) end
          elseif op == 'del' then
            local p, d, n = arg(), arg(), tonumber(arg())
            local dk = pk(p) .. ':' .. d
            for _ = 1, n do
              local id = arg()
              redis.call('ZREM', dk .. ':queue', id)
              redis.call('HDEL', dk .. ':items', id)
              redis.call('HDEL', dk .. ':seqs', id)
            end
          elseif op == 'ctx' or op == 'reserve' then
            local p, d, value = arg(), arg(), arg()
            local field = ({ctx = 'context', reserve = 'seqReserved'})[op]
            if stored(p) then redis.call('HSET', pk(p) .. ':' .. d, field, value) end
          elseif op == 'pendadd' then
            local p, d, n = arg(), arg(), tonumber(arg())
            local keep = stored(p)
            for _ = 1, n do
              local id = arg()
              if keep then redis.call('RPUSH', pk(p) .. ':' .. d .. ':pending', id) end
            end
          elseif op == 'pendclear' then
            local p, d = arg(), arg()
            local dk = pk(p) .. ':' .. d
            redis.call('DEL', dk .. ':pending')
            redis.call('HDEL', dk, 'pending')
          elseif op == 'comp' then
            local p, usedAt, cutoff = arg(), arg(), arg()
            if stored(p) then
              local n = redis.call('HINCRBY', pk(p), 'complications', 1)
              local ck = pk(p) .. ':complications'
              redis.call('ZADD', ck, usedAt, usedAt .. ':' .. n)
              redis.call('ZREMRANGEBYSCORE', ck, '-inf', cutoff)
            end
          elseif op == 'finished' then
            local p, d, n = arg(), arg(), tonumber(arg())
            local fk = pk(p) .. ':' .. d .. ':finished'
            local keep = stored(p)
            for _ = 1, n do
              local id = arg()
              if keep then redis.call('RPUSH', fk, id) end
            end
            if keep then redis.call('LTRIM', fk, -limit, -1) end
          elseif op == 'cancelled' then
            local p, d, id = arg(), arg(), arg()
            if stored(p) then
              local dk = pk(p) .. ':' .. d
              redis.call('RPUSH', dk .. ':finished', id)
              redis.call('LTRIM', dk .. ':finished', -limit, -1)
              redis.call('RPUSH', dk .. ':cancelled', id)
              redis.call('LTRIM', dk .. ':cancelled', -limit, -1)
            end
          elseif op == 'wrong' then
            local entry, at = arg(), tonumber(arg())
            redis.call('RPUSH', pre .. 'pairing:wrong', entry)
            if not wrongAt or at > wrongAt then wrongAt = at end
          else
            return redis.error_reply('watchrelay: unknown store operation ' .. tostring(op))
          end
        end
        -- Once per batch, at its latest wrong code, in one pass: what stopped counting goes.
        if wrongAt then pruneWrong(wrongAt) end
        -- A leader's first batch: no other instance can apply a batch any more (the epoch fences
        -- every earlier leader's), so their entries go; without a fence, another relay on this
        -- Redis may still retry one, and they stay.
        if fence ~= '' and batch == 1 then redis.call('DEL', pre .. 'applied') end
        redis.call('HSET', pre .. 'applied', ARGV[2], batch)
        return ops
        """#

    /// `EVAL loadWrongPairingCodes 0 PREFIX NOW`: removes the wrong pairing codes that no longer
    /// count at `NOW` (wherever they are in the list), then returns the rest, oldest first (an
    /// entry that does not parse is returned too, for the store to report).
    static let loadWrongPairingCodes = #"""
        local wk, now = ARGV[1] .. 'pairing:wrong', tonumber(ARGV[2])
        local kept = {}
        for _, entry in ipairs(redis.call('LRANGE', wk, 0, -1)) do
          local ends = tonumber(string.match(entry, '^(-?%d+):'))
          if not ends or ends > now then
            table.insert(kept, entry)
          else
            redis.call('LREM', wk, 0, entry)
          end
        end
        return kept
        """#

    /// `EVAL loadPair 0 PREFIX PAIR CUTOFF`: prunes the pair's complication uses at or before
    /// `CUTOFF`, then returns `{pair hash, phone direction, watch direction, use times}`, where a
    /// direction is `{hash, queue in order, items hash, seqs hash, finished list, pending list,
    /// cancelled list}` (hashes flat,
    /// as HGETALL gives them); an empty table when the pair is not stored.
    static let loadPair = #"""
        local pre, p, cutoff = ARGV[1], ARGV[2], ARGV[3]
        local k = pre .. 'pair:' .. p
        if redis.call('EXISTS', k) == 0 then return {} end
        redis.call('ZREMRANGEBYSCORE', k .. ':complications', '-inf', cutoff)
        local out = {redis.call('HGETALL', k)}
        for _, d in ipairs({'phone', 'watch'}) do
          local dk = k .. ':' .. d
          table.insert(out, {
            redis.call('HGETALL', dk), redis.call('ZRANGE', dk .. ':queue', 0, -1),
            redis.call('HGETALL', dk .. ':items'), redis.call('HGETALL', dk .. ':seqs'),
            redis.call('LRANGE', dk .. ':finished', 0, -1), redis.call('LRANGE', dk .. ':pending', 0, -1),
            redis.call('LRANGE', dk .. ':cancelled', 0, -1)})
        end
        local uses = redis.call('ZRANGE', k .. ':complications', 0, -1, 'WITHSCORES')
        local times = {}
        for j = 2, #uses, 2 do table.insert(times, uses[j]) end
        table.insert(out, times)
        return out
        """#
}
