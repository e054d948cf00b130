#!/bin/sh
# An adapter that answers hello in a protocol version the harness does not speak.
read hello
echo '{"ok":true,"protocol":4,"supports":["lock"]}'
while read req; do :; done
