"""The `gpustall` command: one entry point, one subcommand per job (py-spy's and scalene's shape).

    gpustall run [options] [--] COMMAND ARGS...   run a job under the agent       (gpustall.run)
    gpustall start|stop|status|list ...           capture windows in running jobs (gpustall.ctl)
    gpustall report|html|diff|export|dump|summarize ...   gsanalyze, same arguments and exit codes
    gpustall demo                                 the data-starved loop on the simulated GPU + report
"""
import sys

from gpustall import __version__

USAGE = """usage: gpustall COMMAND [ARGS...]

Why is my GPU idle, and which line of my code is starving it?

  run [options] [--] CMD...   run CMD (and what it starts) under the agent; traces per rank
  start|stop|status|list      capture windows in jobs started with `gpustall run --on-demand`
  report TRACE...             what the GPU waited for, and which host code owns the idle time
  html TRACE... -o FILE       the same as one self-contained page
  diff BEFORE AFTER           what an optimisation changed
  export|dump|summarize ...   Perfetto/Kineto/flame-graph exports, records as text, one-liners
  demo                        a data-starved training loop on the simulated GPU, then its report

`gpustall COMMAND --help` for each. Example:  gpustall run -- python train.py
"""

ANALYZER = ("report", "html", "diff", "export", "dump", "summarize")
CONTROL = ("start", "stop", "status", "list")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE, end="")
        return 0 if argv else 2
    if argv[0] == "--version":
        print("gpustall %s" % __version__)
        return 0
    command, rest = argv[0], argv[1:]
    if command == "run":
        from gpustall import run
        return run.main(rest)
    if command in CONTROL:
        from gpustall import ctl
        return ctl.main(argv, prog="gpustall")
    if command in ANALYZER:
        from gpustall import analyze
        return analyze.exec_gsanalyze(argv)
    if command == "demo":
        from gpustall import demo
        return demo.main(rest)
    print("gpustall: unknown command '%s' (try gpustall --help)" % command, file=sys.stderr)
    return 2
