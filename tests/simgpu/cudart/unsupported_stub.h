/* unsupported_stub.h — the one function every unsupported entry point calls (api_call.cc). */
#ifndef GPUSTALL_TESTS_SIMGPU_CUDART_UNSUPPORTED_STUB_H_
#define GPUSTALL_TESTS_SIMGPU_CUDART_UNSUPPORTED_STUB_H_
#ifdef __cplusplus
extern "C" {
#endif
/* Returns cudaErrorNotSupported after recording it as the thread's last error. */
int sgUnsupported(const char* name);
#ifdef __cplusplus
}
#endif
#endif
