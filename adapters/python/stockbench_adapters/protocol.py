"""What the Python adapters share: the protocol's lines, and the hello with its
connection (adapters/PROTOCOL.md)."""
import json
import sys

import redis


def say(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def hello():
    """Reads the first line and connects as it says; returns the hello and a client, or
    (None, None) after refusing a hello it cannot take. The caller answers with what it
    supports (ready)."""
    first = json.loads(sys.stdin.readline() or "null")
    if not isinstance(first, dict) or first.get("op") != "hello" or first.get("protocol") != 1:
        say({"ok": False, "error": "want hello, protocol 1"})
        return None, None
    where = first["redis"]
    host, port = where["addr"].rsplit(":", 1)
    client = redis.Redis(host=host, port=int(port), username=where.get("username") or None,
                         password=where.get("password") or None, db=where.get("db", 0),
                         socket_timeout=2, socket_connect_timeout=2)  # inside the protocol's 5 s
    try:
        client.ping()
    except redis.RedisError as e:
        say({"ok": False, "error": "connect: %s" % e})
        return None, None
    return first, client


def ready(supports):
    say({"ok": True, "supports": supports})


def requests():
    """Yields each request until stdin closes."""
    for line in sys.stdin:
        yield json.loads(line)
