"""gpustall: why is my GPU idle, and which line of my code is starving it?

The `gpustall` command (gpustall.cli): `run` a job under the agent (libgsagent.so), `start`/`stop`
capture windows in running jobs, read traces with gsanalyze (`report`, `html`, `diff`, ...), and
`demo` the whole thing on the bundled simulated GPU.
"""
__version__ = "0.1.0"  # follows project(gpustall VERSION ...) in CMakeLists.txt (tests/wheel checks it)
