#!/bin/sh
# An adapter of protocol 2 that documents a class no sale can earn.
read hello
echo '{"ok":true,"protocol":2,"supports":["lock"],"documented":{"none":["FINE"]}}'
while read req; do :; done
