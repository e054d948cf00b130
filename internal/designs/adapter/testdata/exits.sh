#!/bin/sh
# An adapter that cannot start.
echo "PHP Fatal error: Class \"Redis\" not found" >&2
exit 3
