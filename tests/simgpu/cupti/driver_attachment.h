// driver_attachment.h — connects this libcupti to simgpu's driver (libsimgpu_driver.so) through
// the hooks of tests/simgpu/driver/tool_hooks.h.
//
// Like real CUPTI, the library attaches lazily, on the first call that needs the driver
// (subscribing, enabling an activity kind), and detaches in cuptiFinalize; while detached the
// driver pays nothing for a tool. Work done before attaching (contexts, streams, calls) is not
// seen, as with a real late-attaching CUPTI.
//
// Thread safety: both functions are thread-safe and idempotent.
#ifndef GPUSTALL_TESTS_SIMGPU_CUPTI_DRIVER_ATTACHMENT_H_
#define GPUSTALL_TESTS_SIMGPU_CUPTI_DRIVER_ATTACHMENT_H_

namespace simgpu_cupti {

void AttachToDriver();
void DetachFromDriver();

}  // namespace simgpu_cupti

#endif  // GPUSTALL_TESTS_SIMGPU_CUPTI_DRIVER_ATTACHMENT_H_
