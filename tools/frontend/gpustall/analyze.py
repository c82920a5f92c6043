"""gpustall report|html|diff|export|dump|summarize ...: gsanalyze itself, same arguments and exit codes."""
import os
import sys

from gpustall import native

SUBCOMMANDS = ("report", "html", "diff", "export", "dump", "summarize")


def exec_gsanalyze(argv, prog="gpustall"):
    gsanalyze = native.locate().gsanalyze
    if not os.access(gsanalyze, os.X_OK):
        print("%s: gsanalyze not found at %s (build target gsanalyze, or install the wheel)" % (prog, gsanalyze),
              file=sys.stderr)
        return 2
    native.default_signals()
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(gsanalyze, [gsanalyze] + list(argv))
