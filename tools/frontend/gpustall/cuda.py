"""The job's own CUDA libraries from the nvidia-* wheels PyTorch installs (never bundled).

PyTorch's wheels depend on NVIDIA's: site-packages/nvidia/cu13/lib (the CUDA 13 `cuda-toolkit`
layout, one folder) or one folder per library (nvidia/cuda_runtime/lib, nvidia/cuda_cupti/lib).
The agent finds CUPTI next to the runtime the process loaded by itself; when this Python has the
wheels, the front end also names their libcupti.so.13 in GS_CUPTI_LIBRARY (the agent's setting,
tried first), so a job that loads CUPTI late still gets the one that matches its runtime.
"""
import os
import site
import sys

RUNTIME = "libcudart.so.13"
CUPTI = "libcupti.so.13"
# (folder under site-packages, library): the layouts of the nvidia-* wheels, newest first.
LAYOUTS = (
    (os.path.join("nvidia", "cu13", "lib"), RUNTIME),
    (os.path.join("nvidia", "cuda_runtime", "lib"), RUNTIME),
    (os.path.join("nvidia", "cu13", "lib"), CUPTI),
    (os.path.join("nvidia", "cuda_cupti", "lib"), CUPTI),
)


def site_folders():
    folders = []
    try:
        folders += site.getsitepackages()
    except AttributeError:  # an old virtualenv's site module
        pass
    try:
        folders.append(site.getusersitepackages())
    except AttributeError:
        pass
    folders += [p for p in sys.path if p.endswith("-packages")]
    seen, out = set(), []
    for f in folders:
        if f and f not in seen and os.path.isdir(f):
            seen.add(f)
            out.append(f)
    return out


def find_wheel_libraries(folders=None):
    """{'runtime': path or None, 'cupti': path or None} from the first site folder that has them."""
    found = {"runtime": None, "cupti": None}
    for folder in folders if folders is not None else site_folders():
        for sub, name in LAYOUTS:
            key = "runtime" if name == RUNTIME else "cupti"
            path = os.path.join(folder, sub, name)
            if found[key] is None and os.path.isfile(path):
                found[key] = path
    return found
