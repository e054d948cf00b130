"""Refuses the harness's hello, in one line, when the library an adapter drives is not
installed for this interpreter: the harness then says that line and exits 2, rather
than showing a traceback. It imports nothing beyond the standard library."""
import json
import sys

# The Debian package that brings each module an adapter imports.
DEBIAN = {"redis": "python3-redis", "rq": "python3-rq", "celery": "python3-celery", "kombu": "python3-kombu"}


def refuse(err):
    """Answers the hello on stdin with what is missing and how to install it; returns the
    exit status."""
    module = (getattr(err, "name", None) or str(err)).split(".")[0]
    package = DEBIAN.get(module, "python3-" + module)
    if sys.executable.startswith("/usr/bin/"):
        how = "apt-get install %s (make adapters installs every adapter's)" % package
    else:  # not Debian's interpreter: its own packages
        how = "pip install ./adapters/python[rq,celery] for it, or run the adapter with /usr/bin/python3 after apt-get install %s" % package
    why = "the Python module %s is not installed for %s: %s" % (module, sys.executable, how)
    sys.stdin.readline()
    sys.stdout.write(json.dumps({"ok": False, "error": why}) + "\n")
    sys.stdout.flush()
    return 2
