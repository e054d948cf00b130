#!/bin/sh
# An adapter that refuses three tries, then dies mid-sale.
read hello
echo '{"ok":true,"supports":["lock"]}'
n=0
while read req; do
  n=$((n + 1))
  if [ $n -gt 3 ]; then echo "Segmentation fault (core dumped)" >&2; exit 139; fi
  id=$(echo "$req" | sed 's/.*"id":\([0-9]*\).*/\1/')
  echo "{\"id\":$id,\"granted\":false}"
done
