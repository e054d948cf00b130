#!/bin/sh
# A queue adapter that names a lease key outside the sale's keys: an eviction must touch
# only keys under the run's prefix.
read hello
echo '{"ok":true,"protocol":2,"supports":["queue"],"documented":{"none":["SAFE"]},"lease_keys":["rq:wip:default"]}'
while read req; do :; done
