#!/usr/bin/python3
"""Runs stockbench_adapters.celery_queue from a checkout, where nothing is installed:
/usr/bin/python3 adapters/python/celery_queue.py (installed, the command is
stockbench-celery-queue)."""
import sys

from stockbench_adapters.celery_queue import main

sys.exit(main())
