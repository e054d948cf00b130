#!/bin/sh
# A queue adapter that reports a step of its worker loop nobody asked for.
read hello
echo '{"ok":true,"protocol":2,"supports":["queue"]}'
while read req; do echo '{"step":"dequeued","order":"1"}'; done
