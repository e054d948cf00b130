#!/bin/sh
# An adapter that never answers a try, and leaves a child of its own running.
read hello
echo '{"ok":true,"supports":["lock"]}'
sleep 617 &
while read req; do sleep 618; done
