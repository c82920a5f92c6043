"""Where gpustall's native files are: inside the installed package, or in a build tree.

Installed (the wheel), everything sits under gpustall/_native/:
    lib/libgsagent.so          the agent (LD_PRELOAD / CUDA_INJECTION64_PATH / NVTX_INJECTION64_PATH)
    bin/gsanalyze              the analyzer
    bin/gs_agent_env           asks the agent's own code for its rules (tools/frontend/agent_env.cc)
    simgpu/lib/                the simulated CUDA device, for `gpustall demo` and `run --simgpu` only
    workloads/                 the demo's Python workload (data_starved.py and its helpers)
From a source checkout (tools/gsrun, tools/gsctl), the same files come from the build tree:
$GS_BUILD_DIR, else the repository's build/.
"""
import os
import signal

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
NATIVE_DIR = os.path.join(PACKAGE_DIR, "_native")


class Native:
    def __init__(self, root, agent, gsanalyze, agent_env, simgpu_lib, workloads):
        self.root = root
        self.agent = agent
        self.gsanalyze = gsanalyze
        self.agent_env = agent_env
        self.simgpu_lib = simgpu_lib
        self.workloads = workloads


def installed():
    return os.path.isdir(NATIVE_DIR)


def locate():
    if installed():
        n = NATIVE_DIR
        return Native(n, os.path.join(n, "lib", "libgsagent.so"), os.path.join(n, "bin", "gsanalyze"),
                      os.path.join(n, "bin", "gs_agent_env"), os.path.join(n, "simgpu", "lib"),
                      os.path.join(n, "workloads"))
    repo = os.path.normpath(os.path.join(PACKAGE_DIR, "..", "..", ".."))  # tools/frontend/gpustall
    build = os.environ.get("GS_BUILD_DIR") or os.path.join(repo, "build")
    build = os.path.abspath(build)
    return Native(build, os.path.join(build, "lib", "libgsagent.so"),
                  os.path.join(build, "analyzer", "gsanalyze"), os.path.join(build, "bin", "gs_agent_env"),
                  os.path.join(build, "simgpu", "lib"), os.path.join(repo, "tests", "workloads", "py"))


def default_signals():
    """Python ignores SIGPIPE and SIGXFSZ; an exec'd program must get them as a shell gives them."""
    for name in ("SIGPIPE", "SIGXFSZ"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
