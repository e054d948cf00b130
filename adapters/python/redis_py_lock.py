#!/usr/bin/python3
"""Runs stockbench_adapters.redis_py_lock from a checkout, where nothing is installed:
/usr/bin/python3 adapters/python/redis_py_lock.py (installed, the command is
stockbench-redis-py-lock)."""
import sys

try:
    from stockbench_adapters.redis_py_lock import main
except ImportError as err:  # its library is not installed for this interpreter
    from stockbench_adapters.missing import refuse

    sys.exit(refuse(err))

sys.exit(main())
