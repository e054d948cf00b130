#!/usr/bin/python3
"""Runs stockbench_adapters.rq_queue from a checkout, where nothing is installed:
/usr/bin/python3 adapters/python/rq_queue.py (installed, the command is
stockbench-rq-queue)."""
import sys

try:
    from stockbench_adapters.rq_queue import main
except ImportError as err:  # its library is not installed for this interpreter
    from stockbench_adapters.missing import refuse

    sys.exit(refuse(err))

sys.exit(main())
