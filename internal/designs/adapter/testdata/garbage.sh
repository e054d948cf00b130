#!/bin/sh
# An adapter that prints what is not a reply, as a PHP warning on stdout would.
read hello
echo '{"ok":true,"supports":["lock"]}'
while read req; do echo 'Warning: Undefined array key "ttl"'; done
