/* cuda_check.h — CHECK(call) for the C test programs that run on simgpu (tests/e2e,
 * tests/reliability): a CUDA error prints where and which, and exits 1 (a status the drivers read
 * as "the program failed", apart from the statuses the programs exit with on purpose). */
#ifndef GPUSTALL_TESTS_TESTLIB_CUDA_CHECK_H_
#define GPUSTALL_TESTS_TESTLIB_CUDA_CHECK_H_

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                     \
  do {                                                                                  \
    cudaError_t err_ = (call);                                                          \
    if (err_ != cudaSuccess) {                                                          \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,              \
              cudaGetErrorName(err_));                                                  \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

#endif /* GPUSTALL_TESTS_TESTLIB_CUDA_CHECK_H_ */
