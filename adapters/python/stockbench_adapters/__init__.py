"""Python libraries' locks and queues behind stockbench's adapter protocol
(adapters/PROTOCOL.md): redis-py's redis.lock.Lock (stockbench-redis-py-lock) and RQ
(stockbench-rq-queue). Each command is one adapter process; stockbench starts a pool of
them with --lock-exec or --queue-exec."""
