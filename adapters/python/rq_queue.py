#!/usr/bin/python3
"""Runs stockbench_adapters.rq_queue from a checkout, where nothing is installed:
/usr/bin/python3 adapters/python/rq_queue.py (installed, the command is
stockbench-rq-queue)."""
import sys

from stockbench_adapters.rq_queue import main

sys.exit(main())
