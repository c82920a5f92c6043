# Locates the CUDA 13 toolkit's headers (and nvcc, when present).
#
# The agent and simgpu compile against the real CUDA/CUPTI headers so that every struct, enum and
# callback id is the real one; they never link libcudart or libcupti (the agent dlopens CUPTI, and
# simgpu *is* a libcudart/libcupti). So headers are required and nvcc is optional: without nvcc the
# .cu workloads are skipped, with a message.
#
# Search order: -DCUDAToolkit_ROOT=..., $CUDAToolkit_ROOT, $CUDA_HOME, $CUDA_PATH, /usr/local/cuda,
# /usr/local/cuda-13*, /usr (Debian's nvidia-cuda-toolkit layout).
set(_gs_cuda_hints ${CUDAToolkit_ROOT} $ENV{CUDAToolkit_ROOT} $ENV{CUDA_HOME} $ENV{CUDA_PATH} /usr/local/cuda)
file(GLOB _gs_cuda_versioned /usr/local/cuda-13*)
list(APPEND _gs_cuda_hints ${_gs_cuda_versioned} /usr)

find_path(GS_CUDA_INCLUDE_DIR
  NAMES cuda_runtime_api.h cupti.h
  HINTS ${_gs_cuda_hints}
  PATH_SUFFIXES include targets/x86_64-linux/include
  NO_DEFAULT_PATH)
if(NOT GS_CUDA_INCLUDE_DIR OR NOT EXISTS ${GS_CUDA_INCLUDE_DIR}/cupti.h)
  message(FATAL_ERROR
    "gpustall: the CUDA 13 toolkit headers (cuda_runtime_api.h, cupti.h) were not found.\n"
    "  Looked in: ${_gs_cuda_hints}\n"
    "  Point at a toolkit with -DCUDAToolkit_ROOT=/path/to/cuda or CUDA_HOME=/path/to/cuda,\n"
    "  or configure with -DGS_WITH_CUDA=OFF to build only the analyzer (no CUDA needed).")
endif()
file(STRINGS ${GS_CUDA_INCLUDE_DIR}/cuda_runtime_api.h _gs_cudart_ver REGEX "#define CUDART_VERSION")
string(REGEX MATCH "[0-9]+" GS_CUDART_VERSION "${_gs_cudart_ver}")
if(GS_CUDART_VERSION LESS 13000)
  message(FATAL_ERROR "gpustall: ${GS_CUDA_INCLUDE_DIR} holds CUDA ${GS_CUDART_VERSION}; CUDA 13 (13000+) headers are needed.\n"
    "  Point at a CUDA 13 toolkit with -DCUDAToolkit_ROOT=/path/to/cuda-13.")
endif()
get_filename_component(GS_CUDA_ROOT ${GS_CUDA_INCLUDE_DIR} DIRECTORY)

find_program(GS_NVCC nvcc HINTS ${_gs_cuda_hints} PATH_SUFFIXES bin NO_DEFAULT_PATH)
if(GS_NVCC)
  message(STATUS "gpustall: CUDA ${GS_CUDART_VERSION} headers in ${GS_CUDA_INCLUDE_DIR}; nvcc ${GS_NVCC}")
else()
  message(STATUS "gpustall: CUDA ${GS_CUDART_VERSION} headers in ${GS_CUDA_INCLUDE_DIR}; no nvcc: .cu workloads are skipped")
endif()

# An interface target carrying only the headers: linking it never pulls a CUDA library in.
add_library(gs_cuda_headers INTERFACE)
target_include_directories(gs_cuda_headers SYSTEM INTERFACE ${GS_CUDA_INCLUDE_DIR})

# CUDA 12's CUPTI and runtime wheels, unpacked by tools/fetch-cuda12 (hash-pinned there): the
# headers of the layout test (agent/cupti/layout) and the real libcupti.so.12 of
# e2e.cupti12_real_no_driver. Tests that need them are left out, with a message, when absent.
if(DEFINED ENV{GS_CUDA12_CACHE})
  set(_gs_cuda12_default "$ENV{GS_CUDA12_CACHE}")
elseif(DEFINED ENV{XDG_CACHE_HOME})
  set(_gs_cuda12_default "$ENV{XDG_CACHE_HOME}/gpustall/cuda12")
else()
  set(_gs_cuda12_default "$ENV{HOME}/.cache/gpustall/cuda12")
endif()
set(GS_CUDA12_CACHE "${_gs_cuda12_default}" CACHE PATH "Where tools/fetch-cuda12 unpacked the CUDA 12 wheels")
# CUDA 12.9's runtime (include/, lib/libcudart.so.12): what simgpu's CUDA 12 flavour and the CUDA 12
# test programs are built against and compared with.
set(GS_CUDA12_RUNTIME ${GS_CUDA12_CACHE}/nvidia-cuda-runtime-cu12-12.9.79/nvidia/cuda_runtime)
