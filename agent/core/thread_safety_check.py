#!/usr/bin/env python3
"""thread_safety_check.py — clang's thread-safety analysis over every agent translation unit.

The agent's mutexes carry clang's capability annotations (agent/core/mutex.h): who guards what
(GS_GUARDED_BY), what a function must not hold (GS_EXCLUDES), and the lock order
(GS_ACQUIRED_AFTER, agent/core/agent_parts.h). GCC, which builds the agent, ignores them; this
check is what makes them hold. It runs `clang++ -fsyntax-only -Wthread-safety -Wthread-safety-beta
-Werror` with each agent source's own flags from the build's compile_commands.json (the top-level
CMakeLists.txt exports it). -Wthread-safety-beta is the part that checks GS_ACQUIRED_AFTER: plain
-Wthread-safety does not report nesting in the wrong order.

Before the sources, it compiles a canary: a function that takes writer_mu, then control_mu (the
order agent_parts.h forbids). The canary must be rejected, so a change of flags or of mutex.h that
silenced the analysis fails this check instead of passing it vacuously.

  thread_safety_check.py --build BUILD_DIR --source SOURCE_DIR [--clang clang++] [--jobs N]

Exit 0: every agent source is clean and the canary is caught. Exit 1: a diagnostic (printed), a
canary that compiled, no clang, or no agent sources in compile_commands.json.
"""

import argparse
import concurrent.futures
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

CHECK_FLAGS = ["-fsyntax-only", "-Wthread-safety", "-Wthread-safety-beta", "-Werror"]

# Lock order violated on purpose (agent_parts.h: window_mu, then control_mu, then writer_mu).
CANARY = """
#include "agent/core/agent_parts.h"
namespace gs::core {
void CanaryTakesWriterThenControl(AgentParts* parts) {
  MutexLock writer(&parts->writer_mu);
  MutexLock control(&parts->control_mu);
}
}  // namespace gs::core
"""
CANARY_DIAGNOSTIC = "must be acquired before"


def clang_command(entry, clang, source_file):
    """The entry's compiler command with clang, checking flags, and no output (-o/-c/-M*)."""
    if "arguments" in entry:
        argv = list(entry["arguments"])
    else:
        argv = shlex.split(entry["command"])
    out = [clang]
    skip_next = False
    for arg in argv[1:]:
        if skip_next:
            skip_next = False
            continue
        if arg in ("-o", "-MF", "-MT", "-MQ"):
            skip_next = True
            continue
        if arg in ("-c", "-MD", "-MMD") or arg == entry["file"]:
            continue
        out.append(arg)
    return out + CHECK_FLAGS + [source_file]


def run(cmd, cwd):
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return proc.returncode, proc.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--clang", default="clang++")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()

    if shutil.which(args.clang) is None:
        print(f"thread_safety_check: {args.clang} not found (tools/setup installs clang)", file=sys.stderr)
        return 1
    db_path = os.path.join(args.build, "compile_commands.json")
    try:
        with open(db_path) as f:
            db = json.load(f)
    except (OSError, ValueError) as e:
        print(f"thread_safety_check: cannot read {db_path}: {e} (configure with "
              "CMAKE_EXPORT_COMPILE_COMMANDS=ON, a Ninja or Makefile generator)", file=sys.stderr)
        return 1
    agent_dir = os.path.join(os.path.realpath(args.source), "agent") + os.sep
    entries = {}
    for entry in db:
        path = os.path.realpath(os.path.join(entry["directory"], entry["file"]))
        if path.startswith(agent_dir) and path.endswith((".cc", ".cpp")):
            entries.setdefault(path, entry)  # one command per source is enough
    anchor = os.path.join(agent_dir, "core", "agent.cc")
    if anchor not in entries:
        print(f"thread_safety_check: {anchor} is not in {db_path}: not an agent build", file=sys.stderr)
        return 1

    # The canary, with agent.cc's flags (it includes what agent.cc includes).
    with tempfile.TemporaryDirectory() as tmp:
        canary = os.path.join(tmp, "lock_order_canary.cc")
        with open(canary, "w") as f:
            f.write(CANARY)
        rc, out = run(clang_command(entries[anchor], args.clang, canary), entries[anchor]["directory"])
    if rc == 0 or CANARY_DIAGNOSTIC not in out:
        print("thread_safety_check: the lock-order canary (writer_mu, then control_mu) was not "
              f"reported as '{CANARY_DIAGNOSTIC}'; the analysis is not checking the lock order:\n{out}")
        return 1

    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {
            pool.submit(run, clang_command(e, args.clang, path), e["directory"]): path
            for path, e in sorted(entries.items())
        }
        for fut in concurrent.futures.as_completed(futures):
            rc, out = fut.result()
            if rc != 0:
                failed.append((futures[fut], out))
    for path, out in sorted(failed):
        print(f"--- {os.path.relpath(path, args.source)}\n{out}")
    print(f"thread_safety_check: {len(entries)} agent sources, {len(failed)} with diagnostics; "
          "lock-order canary reported")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
