#!/bin/sh
# An adapter that answers an id nobody asked.
read hello
echo '{"ok":true,"supports":["lock"]}'
while read req; do echo '{"id":999999,"granted":false}'; done
