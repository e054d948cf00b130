# Reads a JUnit XML file with junitparser (Debian's python3-junitparser), as a CI
# system's test report reader does, and prints each case on one line:
# classname, name, result (passed, failure, error, skipped), message, text (a passed
# case's system-out); then each suite's counts.
import sys

from junitparser import JUnitXml

xml = JUnitXml.fromfile(sys.argv[1])
for suite in xml:
    for case in suite:
        kind, msg, text = "passed", "", case.system_out or ""
        for r in case.result:
            kind, msg, text = type(r).__name__.lower(), r.message or "", r.text or ""
        print("\t".join([case.classname, case.name, kind, msg.replace("\n", " "), text.replace("\n", "\\n")]))
    print("suite\t%s\t%d tests\t%d failures\t%d errors\t%d skipped" % (suite.name, suite.tests, suite.failures, suite.errors, suite.skipped))
