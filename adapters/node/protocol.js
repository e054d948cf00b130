'use strict';
// What the Node adapters share: the protocol's lines, and the hello with its connection
// (adapters/PROTOCOL.md, version 2).
const readline = require('readline');

// Debian's node-redis lives in /usr/share/nodejs, which Debian's nodejs searches and a
// nodejs from elsewhere may not: add it to the search path, for node-redis's own requires
// too, after what an installed package brings (node_modules come first).
const Module = require('module');
process.env.NODE_PATH = [process.env.NODE_PATH, '/usr/share/nodejs'].filter(Boolean).join(':');
Module._initPaths();
let createClient, createCluster, missing;
try {
  ({ createClient, createCluster } = require('redis'));
} catch (e) {
  // Refused at hello, in one line, rather than a stack trace.
  missing = `node-redis is not installed for ${process.execPath} (${e.code || e.message}): apt-get install node-redis (make adapters installs every adapter's), or npm install in adapters/node`;
}

// A reply waits 2 s at most, a connect 1 s: inside the protocol's 15 s, with room for the
// reconnect that follows a timeout. node-redis 4 has no command timeout of its own, and
// a reply the network drops leaves its command waiting for ever (node-redis#2205; the
// socketTimeout of node-redis 5, PR #2965, is the fix): --no-command-timeout runs the
// client as it comes, which is how that is seen.
const REPLY_MS = process.argv.includes('--no-command-timeout') ? 0 : 2000;
const CONNECT_MS = 1000;

function say(m) { process.stdout.write(JSON.stringify(m) + '\n'); }

// connect makes a client of the server hello names, as a Node service would: a cluster
// client under a cluster; else one of addr, which under a Sentinel group is the harness's
// front to the master (node-redis 4 has no Sentinel client).
async function connect(where) {
  const auth = { username: where.username || undefined, password: where.password || undefined };
  // node-redis's own backoff grows to 500 ms between tries: a server down a second or
  // two (a restart under load) would then be found again up to half a second late, as
  // long as the TTL/2 in which a fault's second holder has to come (a rolling restart in
  // CI once let nobody in: SAFE). A tenth of a second keeps the clients on the server.
  const socket = { connectTimeout: CONNECT_MS, reconnectStrategy: (n) => Math.min(n * 20, 100) };
  let client;
  if (where.cluster && where.cluster.length > 0) {
    client = createCluster({ rootNodes: where.cluster.map((a) => ({ url: 'redis://' + a })), defaults: { ...auth, socket } });
  } else {
    const [host, port] = [where.addr.slice(0, where.addr.lastIndexOf(':')), Number(where.addr.slice(where.addr.lastIndexOf(':') + 1))];
    client = createClient({ ...auth, database: where.db || 0, socket: { ...socket, host, port } });
  }
  client.on('error', () => {}); // a fault's errors reach the requests that meet them
  await timed(client.connect());
  return client;
}

// timed is p, or an error once REPLY_MS has passed (p itself with --no-command-timeout).
function timed(p) {
  if (REPLY_MS === 0) return p;
  let timer;
  const late = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error('no reply within 2s')), REPLY_MS); });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

// serve reads hello, connects, answers with supports and documented, then answers each
// request with handle's reply, or with the error it met, one at a time. A request that
// failed drops the connection: the next one connects anew, as a restarted worker would.
async function serve(supports, documented, handle) {
  const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  const first = await lines.next();
  const hello = first.done ? null : JSON.parse(first.value);
  if (!hello || hello.op !== 'hello' || !(hello.versions || []).includes(2)) {
    say({ ok: false, error: 'want hello, protocol 2' });
    process.exit(1);
  }
  if (missing) {
    say({ ok: false, error: missing });
    process.exit(2);
  }
  let client;
  const redis = async () => (client = client || (await connect(hello.redis)));
  try {
    await redis();
  } catch (e) {
    say({ ok: false, error: 'connect: ' + e.message });
    process.exit(1);
  }
  say({ ok: true, protocol: 2, supports, documented });
  for (let next = await lines.next(); !next.done; next = await lines.next()) {
    const req = JSON.parse(next.value);
    try {
      say({ id: req.id, ...(await handle(req, await redis(), hello)) });
    } catch (e) {
      const dropped = client;
      client = undefined;
      if (dropped) dropped.disconnect().catch(() => {});
      say({ id: req.id, error: String(e.message || e) });
    }
  }
  if (client) await client.disconnect().catch(() => {});
  process.exit(0);
}

module.exports = { serve, timed };
