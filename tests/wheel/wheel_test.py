#!/usr/bin/env python3
"""wheel_test.py — the wheel as users get it (ctest runs one case per test, wheel.<case>).

    wheel_test.py build  --build-dir BUILD --dist DIR --auditwheel PATH   tools/wheel on the built tree
    wheel_test.py glibc  --dist DIR --auditwheel PATH           every shipped ELF vs the tag
    wheel_test.py glibc_compat --dist DIR --probe EXE          agent/core/glibc_compat.c at work
    wheel_test.py licenses --dist DIR                          Apache-2.0 metadata; every bundled piece's text
    wheel_test.py venv   --dist DIR --python PYTHON              pip install + the gpustall command

`venv` works with no build tree on any path: a fresh venv in a temporary folder outside the build,
`pip install --no-index` of the wheel, an environment with no GS_*, LD_*, PYTHONPATH or launcher
variables, and the commands a user types: `gpustall demo`; `gpustall run --simgpu -- python
data_starved.py` then `gpustall report`; a two-rank torchrun-style launch (RANK, LOCAL_RANK,
WORLD_SIZE, TORCHELASTIC_RUN_ID) giving one trace per rank; `gpustall run --on-demand` with
`gpustall start/stop` opening a window; bad input (exit 2, nothing started). Exit 0 = pass, 77 =
skipped (the interpreter is not installed).
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testlib"))
from gstest import check, exit_status, fail  # noqa: E402  (tests/testlib)

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TIMEOUT = 120
GLIBC_LIBRARIES = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "ld-linux-x86-64.so.2"}
LAUNCHER_VARS = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "SLURM_PROCID", "SLURM_LOCALID",
                 "SLURM_JOB_ID", "SLURM_NTASKS", "SLURM_NTASKS_PER_NODE", "OMPI_COMM_WORLD_RANK",
                 "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE",
                 "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "PBS_JOBID", "LSB_JOBID", "TORCHELASTIC_RUN_ID",
                 "PMIX_NAMESPACE", "CUDA_HOME", "CUDA_PATH")


def the_wheel(dist):
    if os.path.exists(os.path.join(dist, "SKIPPED")):  # wheel.build had no auditwheel
        print("SKIP: " + open(os.path.join(dist, "SKIPPED")).read().strip())
        sys.exit(77)
    wheels = glob.glob(os.path.join(dist, "gpustall-*.whl"))
    check(len(wheels) == 1, "want one wheel in %s, found %s" % (dist, wheels))
    return wheels[0] if wheels else None


def wheel_glibc(wheel):
    m = re.search(r"-py3-none-manylinux_(\d+)_(\d+)_x86_64\.whl$", wheel)
    check(m is not None, "%s: not a py3-none-manylinux_X_Y_x86_64 wheel" % os.path.basename(wheel))
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


# --- build ---------------------------------------------------------------------------------------

def case_build(args):
    shutil.rmtree(args.dist, ignore_errors=True)
    missing = None
    if not os.access(args.auditwheel, os.X_OK):
        missing = "%s is missing: run tools/setup (it makes the wheel venv)" % args.auditwheel
    elif not os.path.exists(os.path.join(args.build_dir, "portable", "CMakeCache.txt")):
        missing = ("%s/portable, the glibc 2.28 build, is not there: it needs zig in the wheel venv "
                   "(tools/setup) and GS_BUILD_PORTABLE=ON" % args.build_dir)
    if missing:
        # Like the tests that need the test venv: say so and skip, never install anything here.
        os.makedirs(args.dist)
        with open(os.path.join(args.dist, "SKIPPED"), "w") as f:
            f.write(missing + "\n")
        print("SKIP: " + missing)
        sys.exit(77)
    p = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "wheel"), "--no-setup", "--no-build",
                        "--build-dir", args.build_dir, "--out", args.dist],
                       env=dict(os.environ, GS_WHEEL_VENV=os.path.dirname(os.path.dirname(args.auditwheel))),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    check(p.returncode == 0, "tools/wheel exited %d:\n%s" % (p.returncode, p.stderr.decode(errors="replace")))
    wheel = the_wheel(args.dist)
    if wheel:
        print("%s: %.1f MB" % (os.path.basename(wheel), os.path.getsize(wheel) / 1e6))


# --- glibc ---------------------------------------------------------------------------------------

def elf_files(folder):
    for base, _, files in os.walk(folder):
        for f in files:
            path = os.path.join(base, f)
            with open(path, "rb") as fh:
                if fh.read(4) == b"\x7fELF":
                    yield path


def imported_versions(path):
    """{'GLIBC': [(2, 34), ...], 'GLIBCXX': [...], ...} from the file's version needs (readelf -V)."""
    out = subprocess.run(["readelf", "-V", "-W", path], stdout=subprocess.PIPE, check=True).stdout.decode()
    need = out.split(".gnu.version_r")[1] if ".gnu.version_r" in out else ""
    found = {}
    for name, ver in re.findall(r"Name: ([A-Z_]+)_([0-9][0-9.]*)\s", need):
        found.setdefault(name, []).append(tuple(int(x) for x in ver.split(".")))
    return found


def needed(path):
    out = subprocess.run(["readelf", "-d", "-W", path], stdout=subprocess.PIPE, check=True).stdout.decode()
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def case_glibc(args):
    wheel = the_wheel(args.dist)
    if not wheel:
        return
    tag = wheel_glibc(wheel)
    check(tag <= (2, 28), "the wheel is tagged manylinux_%d_%d, want 2_28 (PyTorch's floor) or older" % tag)
    with tempfile.TemporaryDirectory() as tmp:
        with zipfile.ZipFile(wheel) as z:
            z.extractall(tmp)
        elves = sorted(elf_files(tmp))
        names = [os.path.relpath(p, tmp) for p in elves]
        for want in ("gpustall/_native/lib/libgsagent.so", "gpustall/_native/bin/gsanalyze",
                     "gpustall/_native/bin/gs_agent_env", "gpustall/_native/simgpu/lib/libcudart.so.13",
                     "gpustall/_native/simgpu/lib/libcupti.so.13", "gpustall/_native/simgpu/lib/libsimgpu_driver.so",
                     "gpustall/_native/simgpu/lib/libcuda.so.1"):
            check(want in names, "%s is not in the wheel (%s)" % (want, names))
        for path, name in zip(elves, names):
            versions = imported_versions(path)
            newest = max(versions.get("GLIBC", [(0,)]))
            print("%-66s %s" % (name, "GLIBC_" + ".".join(map(str, newest)) if newest > (0,) else "no glibc import"))
            check(newest <= tag, "%s imports GLIBC_%s, newer than the tag's %d.%d" %
                  (name, ".".join(map(str, newest)), tag[0], tag[1]))
            # No C++ runtime of the host's: zig links libc++ into every file (cmake/GsPortable.cmake).
            check("GLIBCXX" not in versions and "CXXABI" not in versions, "%s needs the host's libstdc++ (%s)" %
                  (name, sorted(v for v in versions if v != "GLIBC")))
            # Never a CUDA library of NVIDIA's: the only libcudart/libcupti are simgpu's, in their
            # own folder that nothing but `demo` / `run --simgpu` puts on a search path.
            if re.match(r"lib(cuda|cudart|cupti|nvrtc|cublas|cudnn|nccl)", os.path.basename(name)):
                check(name.startswith("gpustall/_native/simgpu/lib/"), "a CUDA library outside simgpu: %s" % name)
        # glibc's own libraries only (before 2.34 pthread and dl were libraries of their own):
        # everything else is inside each file.
        for name in ("lib/libgsagent.so", "bin/gsanalyze", "bin/gs_agent_env"):
            libs = needed(os.path.join(tmp, "gpustall/_native", name))
            check(set(libs) <= GLIBC_LIBRARIES, "%s needs %s, want glibc's libraries only" % (name, libs))
        agent = os.path.join(tmp, "gpustall/_native/lib/libgsagent.so")
        dbg = subprocess.run(["readelf", "-S", "-W", agent], stdout=subprocess.PIPE).stdout.decode()
        check(".debug_info" not in dbg, "libgsagent.so is not stripped")
    shown = subprocess.run([args.auditwheel, "show", wheel], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    text = " ".join(shown.stdout.decode(errors="replace").split())
    # auditwheel names the most compatible tag the files allow: the wheel's or an older glibc's.
    m = re.search(r'consistent with the following platform tag: "manylinux_(\d+)_(\d+)_x86_64"', text)
    allowed = (int(m.group(1)), int(m.group(2))) if m else None
    check(shown.returncode == 0 and allowed is not None and allowed <= tag,
          "auditwheel show does not agree with manylinux_%d_%d_x86_64:\n%s" % (tag + (text,)))
    if allowed:
        print("auditwheel show: the files allow manylinux_%d_%d; the tag is %d_%d" % (allowed + tag))


def case_glibc_compat(args):
    p = subprocess.run([args.probe], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    check(p.returncode == 0, "%s: exit %d: %s" % (args.probe, p.returncode, p.stdout.decode(errors="replace")))
    dynsym = subprocess.run(["readelf", "--dyn-syms", "-W", args.probe], stdout=subprocess.PIPE,
                            check=True).stdout.decode()
    for name in ("_dl_find_object", "arc4random"):
        check(re.search(r"UND\s+%s\b" % name, dynsym) is None, "%s imports %s from glibc" % (args.probe, name))


# --- licenses ------------------------------------------------------------------------------------

# A symbol that only the component defines (nm -C of the unstripped copy in gpustall-X.debug/).
COMPONENT_MARKERS = {"protobuf": "google::protobuf::", "abseil": "absl::", "libunwind": "_ULx86_64_",
                     "zlib": "inflateReset", "zstd": "ZSTD_decompressDCtx", "rapidjson": "rapidjson::",
                     "zig-runtime": "std::__1::"}


def case_licenses(args):
    """gpustall is Apache-2.0 (PEP 639 metadata), and every piece of someone else's code in the
    wheel has its licence text in .dist-info/licenses/: the libraries auditwheel grafted into
    gpustall.libs/ and what each ELF links statically (gpustall/_native/BUNDLED.json, checked here
    against the ELF files' own symbols)."""
    wheel = the_wheel(args.dist)
    if not wheel:
        return
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        dist_info = [n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA")]
        check(len(dist_info) == 1, "dist-info folders: %s" % dist_info)
        dist_info = dist_info[0] if dist_info else ""
        meta = z.read(dist_info + "/METADATA").decode()
        check("License-Expression: Apache-2.0" in meta.splitlines(), "METADATA has no License-Expression: Apache-2.0:\n" + meta)
        check(re.search(r"(?m)^License: ", meta) is None, "METADATA keeps a License: field:\n" + meta)
        check(re.search(r"(?m)^Metadata-Version: 2\.([4-9]|\d\d)$", meta) is not None,
              "License-Expression needs Metadata-Version 2.4 or later:\n" + meta)
        listed = re.findall(r"(?m)^License-File: (.+)$", meta)
        licences = dist_info + "/licenses/"
        for f in listed:
            check(licences + f in names, "License-File %s is not in %s" % (f, licences))
        with open(os.path.join(ROOT, "LICENSE"), "rb") as f:
            check("LICENSE" in listed and z.read(licences + "LICENSE") == f.read(),
                  "the wheel's LICENSE is not the project's")

        def text_of(component):
            path = licences + "third_party/%s.txt" % component
            text = z.read(path).decode(errors="replace") if path in names else ""
            check(re.search(r"(?i)copyright", text) is not None and path[len(licences):] in listed,
                  "%s has no licence text in the wheel (want %s, listed in METADATA)" % (component, path))

        bundled = json.loads(z.read("gpustall/_native/BUNDLED.json"))
        elves = [n for n in names if not n.endswith("/") and z.open(n).read(4) == b"\x7fELF"]
        # Every dependency is linked in (cmake/GsPortable.cmake); a library auditwheel grafts into
        # gpustall.libs/ all the same needs its own licence text, checked below.
        shipped_libs = [n for n in elves if n.startswith("gpustall.libs/")]
        for name in elves:
            print(name)
            if name in shipped_libs:
                owners = [c for c, d in bundled["components"].items()
                          if d["shared"] and re.search(d["shared"], os.path.basename(name))]
                check(len(owners) == 1, "%s: bundled by auditwheel, owned by %s (want one component)" % (name, owners))
            else:
                check(name in bundled["static"], "%s is not in BUNDLED.json" % name)
                owners = bundled["static"].get(name, [])
                version = dist_info[len("gpustall-"):-len(".dist-info")]
                debug = os.path.join(args.dist, "gpustall-%s.debug" % version,
                                     name[len("gpustall/_native/"):] + ".debug")
                if os.path.isfile(debug):
                    syms = subprocess.run(["nm", "-C", "--defined-only", debug], stdout=subprocess.PIPE,
                                          check=True).stdout.decode(errors="replace")
                    for c, marker in COMPONENT_MARKERS.items():
                        check(marker not in syms or c in owners,
                              "%s defines %s symbols but BUNDLED.json lists %s" % (name, c, owners))
                else:
                    fail("%s: no debug file %s to check BUNDLED.json against" % (name, debug))
            print("  " + (", ".join(owners) or "nothing bundled"))
            for c in owners:
                text_of(c)


# --- venv ----------------------------------------------------------------------------------------

class Venv:
    def __init__(self, python, wheel, tmp):
        self.tmp = tmp
        self.dir = os.path.join(tmp, "venv")
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("GS_", "SIMGPU_", "LD_", "PYTHON", "CUDA_INJECTION", "NVTX_INJECTION"))
                    and k not in LAUNCHER_VARS and k not in ("VIRTUAL_ENV", "PYENV_VERSION")}
        self.env["PATH"] = os.path.join(self.dir, "bin") + ":/usr/bin:/bin"
        self.env["XDG_RUNTIME_DIR"] = os.path.join(tmp, "run")
        os.makedirs(self.env["XDG_RUNTIME_DIR"], mode=0o700)
        self.work = os.path.join(tmp, "work")
        os.makedirs(self.work)
        self.sh([python, "-m", "venv", self.dir])
        self.sh([self.bin("pip"), "install", "-q", "--no-index", "--disable-pip-version-check", wheel])
        self.python = self.bin("python")

    def bin(self, name):
        return os.path.join(self.dir, "bin", name)

    def sh(self, cmd, env=None, want=0, cwd=None):
        p = subprocess.run(cmd, env=env or self.env, cwd=cwd or self.work, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=TIMEOUT)
        out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
        if want is not None:
            check(p.returncode == want, "%s: exit %d, want %d\nstdout: %s\nstderr: %s" %
                  (" ".join(cmd), p.returncode, want, out[-2000:], err[-2000:]))
        return p.returncode, out, err

    def gpustall(self, *a, **kw):
        return self.sh([self.bin("gpustall")] + list(a), **kw)


def first_top_stack(report):
    """The first row under the text report's "Top stacks by idle time" heading ("" if none)."""
    lines = report.splitlines()
    for i, line in enumerate(lines[:-1]):
        if line.startswith("Top stacks by idle time"):
            return lines[i + 1]
    return ""


def case_venv(args):
    if not os.path.exists(args.python):
        print("SKIP: %s is not installed" % args.python)
        sys.exit(77)
    wheel = the_wheel(args.dist)
    if not wheel:
        return
    with tempfile.TemporaryDirectory(prefix="gpustall-wheel-") as tmp:
        v = Venv(args.python, wheel, tmp)
        # The installed package, not a source tree: no build folder anywhere on its paths.
        _, where, _ = v.sh([v.python, "-c", "import gpustall.native as n; print(n.locate().agent)"])
        check(where.startswith(v.dir) and os.path.isfile(where.strip()), "agent at %r" % where)
        workload = os.path.join(os.path.dirname(where.strip()), "..", "workloads", "data_starved.py")
        with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
            version = re.search(r"project\(gpustall\b[^)]*VERSION ([0-9.]+)", f.read()).group(1)
        _, out, _ = v.gpustall("--version")
        check(out.strip() == "gpustall " + version and "-%s-" % version in os.path.basename(wheel),
              "version: %r and %s, want the project's %s" % (out, os.path.basename(wheel), version))

        # 1. gpustall demo prints the report, and names the workload's own function first. The
        #    workload's script lives in site-packages here, but it is the program the command line
        #    runs: its frames are the user's, and no site reads as libc's entry frames.
        _, out, err = v.gpustall("demo", "--steps", "15")
        top = first_top_stack(out)
        check(re.match(r"\s+1\.", top) is not None and "load_batch (data_starved.py" in top,
              "demo report's first top stack is %r, want load_batch's:\n%s\n%s" % (top, out, err))
        check("__libc_start_main" not in out and "libc.so.6+" not in out,
              "demo report shows the process's entry frames:\n%s" % out)

        # 2. gpustall run on simgpu writes a trace; gpustall report reads it.
        _, out, err = v.gpustall("run", "--simgpu", "-o", "single/", "--", v.python, workload, "--steps", "8")
        traces = glob.glob(os.path.join(v.work, "single", "*.gstrace"))
        check(len(traces) == 1, "run: traces %s; stderr %s" % (traces, err))
        single = os.path.join(v.work, "single")
        check("traces go to %s/" % single in err, "no 'traces go to' line: %r" % err)
        if traces:  # at the end, what was written and how the agent captured it (from the trace)
            check("wrote 1 trace in %s/: %s (capture cupti: " % (single, os.path.basename(traces[0])) in err,
                  "no 'wrote 1 trace' line at exit: %r" % err)
        # A program that never touches CUDA: nothing written, and the last line says so.
        rc, _, err = v.gpustall("run", "-o", "nocuda/", "--", v.python, "-c", "print('no cuda')")
        check("no trace written in %s/: no CUDA work was seen" % os.path.join(v.work, "nocuda") in err
              and "wrote" not in err, "no-CUDA run: %r" % err)
        if traces:
            _, out, _ = v.gpustall("report", "--json", traces[0])
            check(json.loads(out).get("traces") is not None, "report --json: %s" % out[:300])
            rc, _, err = v.gpustall("report", os.path.join(v.work, "nonexistent.gstrace"), want=None)
            check(rc == 2, "report on a missing file: exit %d, want gsanalyze's 2 (%s)" % (rc, err))

        # 3. torchrun-style: two ranks, one trace each, in the job's folder.
        env = dict(v.env, WORLD_SIZE="2", LOCAL_WORLD_SIZE="2", TORCHELASTIC_RUN_ID="wheeljob")
        procs = []
        for rank in (0, 1):
            e = dict(env, RANK=str(rank), LOCAL_RANK=str(rank))
            procs.append(subprocess.Popen([v.bin("gpustall"), "run", "--simgpu", "--", v.python, workload,
                                           "--steps", "5"], env=e, cwd=v.work,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE))
        for p in procs:
            _, err = p.communicate(timeout=TIMEOUT)
            check(p.returncode == 0, "rank exit %d: %s" % (p.returncode, err.decode(errors="replace")))
        ranks = sorted(os.path.basename(t) for t in glob.glob(os.path.join(v.work, "gpustall-wheeljob", "*.gstrace")))
        check(len(ranks) == 2 and "-r0-" in ranks[0] and "-r1-" in ranks[1], "per-rank traces: %s" % ranks)

        # 4. CUPTI is the agent's choice: the one beside the runtime the job loaded, whichever
        #    Python runs the front end. a. A PyTorch-style environment: the CUDA runtime and CUPTI
        #    in this Python's site-packages/nvidia/cu13/lib (simgpu's, standing in for NVIDIA's
        #    wheels): the agent records through that CUPTI, and the front end's last line says so.
        _, site_dir, _ = v.sh([v.python, "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])"])
        fake = os.path.join(site_dir.strip(), "nvidia", "cu13", "lib")
        os.makedirs(fake)
        simgpu_lib = os.path.join(os.path.dirname(where.strip()), "..", "simgpu", "lib")
        for lib in os.listdir(simgpu_lib):
            shutil.copy(os.path.join(simgpu_lib, lib), fake)
        _, out, err = v.gpustall("run", "-o", "wheels/", "--", v.python, workload, "--steps", "5",
                                 env=dict(v.env, GS_CUDART_PATH=os.path.join(fake, "libcudart.so.13")))
        wheel_cupti = os.path.join(os.path.realpath(fake), "libcupti.so.13")
        check("(capture cupti: %s " % wheel_cupti in err, "the nvidia wheel's CUPTI not reported: %r" % err)
        traces = glob.glob(os.path.join(v.work, "wheels", "*.gstrace"))
        check(len(traces) == 1, "nvidia-wheel run: traces %s" % traces)
        if traces:
            _, out, _ = v.gpustall("report", traces[0])
            check("capture cupti" in out, "the agent did not record through the wheel's CUPTI: %s" % out[:400])
        #    b. The same front end, a job on another runtime (the package's simgpu one, standing in
        #       for another environment's): the CUPTI beside that runtime, never this Python's.
        other_lib = os.path.realpath(simgpu_lib)
        _, out, err = v.gpustall("run", "-o", "other/", "--", v.python, workload, "--steps", "5",
                                 env=dict(v.env, GS_CUDART_PATH=os.path.join(other_lib, "libcudart.so.13")))
        check("(capture cupti: %s " % os.path.join(other_lib, "libcupti.so.13") in err and wheel_cupti not in err,
              "a job on another runtime got this Python's CUPTI: %r" % err)
        shutil.rmtree(os.path.join(site_dir.strip(), "nvidia"))

        # 5. on demand: a dormant job, a window opened and closed with gpustall start/stop.
        job = subprocess.Popen([v.bin("gpustall"), "run", "-q", "--simgpu", "--on-demand", "-o", "od/", "--",
                                v.python, workload, "--steps", "400"], env=v.env, cwd=v.work,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.time() + 30
            out = ""
            while time.time() < deadline and str(job.pid) not in out:
                _, out, _ = v.gpustall("list", want=None)
                time.sleep(0.2)
            check(str(job.pid) in out, "gpustall list never showed the job: %r" % out)
            _, out, _ = v.gpustall("start", "--pid", str(job.pid))
            check("window 1 recording to" in out, "start: %r" % out)
            time.sleep(0.5)
            _, out, _ = v.gpustall("stop", "--pid", str(job.pid))
            check("window 1 written to" in out, "stop: %r" % out)
            windows = glob.glob(os.path.join(v.work, "od", "*window-1*.gstrace"))
            check(len(windows) == 1, "window traces: %s" % windows)
            if windows:
                v.gpustall("report", windows[0])
        finally:
            job.kill()
            job.wait()

        # 6. bad input: one line, exit 2, nothing started.
        marker = os.path.join(v.work, "ran")
        for bad, env_extra in ((["run"], {}), (["run", "--frobnicate", "touch", marker], {}),
                               (["run", "--", "/no/such/program"], {}),
                               (["run", "touch", marker], {"GS_STACK_DEPTH": "500"}),
                               (["run", "--stacks", "sideways", "touch", marker], {}),
                               (["run", "touch", marker], {"GS_SAMPLE_HZ": "lots"})):
            rc, out, err = v.gpustall(*bad, env=dict(v.env, **env_extra), want=None)
            check(rc == 2 and len(err.splitlines()) == 1 and err.startswith("gpustall: "),
                  "%s %s: exit %d, stderr %r (want one 'gpustall: ' line, exit 2)" % (bad, env_extra, rc, err))
            check(not os.path.exists(marker), "%s: the command ran" % bad)


CASES = {"build": case_build, "glibc": case_glibc, "glibc_compat": case_glibc_compat, "licenses": case_licenses,
         "venv": case_venv}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--build-dir")
    ap.add_argument("--dist", required=True)
    ap.add_argument("--auditwheel")
    ap.add_argument("--python")
    ap.add_argument("--probe")
    args = ap.parse_args()
    CASES[args.case](args)
    sys.exit(exit_status())


if __name__ == "__main__":
    main()
