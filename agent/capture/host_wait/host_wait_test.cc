// host_wait_test.cc — the table of wrapped blocking calls (host_wait.def).
#include "agent/capture/host_wait/host_wait.h"

#include <dlfcn.h>

#include <cstring>
#include <set>
#include <string>

#include "gtest/gtest.h"

namespace gs {
namespace {

struct Row {
  const char* name;
  const char* version;
};
constexpr Row kRows[] = {
#define GS_HOST_WAIT(NAME, RET, SIGNATURE, ARGS, VERSION, ...) {#NAME, VERSION},
#include "agent/capture/host_wait/host_wait.def"
#undef GS_HOST_WAIT
};

TEST(HostWaitTableTest, NamesAreUniqueAndIndexed) {
  std::set<std::string> seen;
  for (size_t i = 0; i < kHostWaitFunctionCount; ++i) {
    ASSERT_NE(HostWaitName(static_cast<uint16_t>(i)), nullptr);
    EXPECT_STREQ(HostWaitName(static_cast<uint16_t>(i)), kRows[i].name);
    EXPECT_TRUE(seen.insert(kRows[i].name).second) << kRows[i].name;
  }
  EXPECT_EQ(HostWaitName(static_cast<uint16_t>(kHostWaitFunctionCount)), nullptr);
  EXPECT_STREQ(HostWaitName(static_cast<uint16_t>(HostWaitFunction::k_nanosleep)), "nanosleep");
}

TEST(HostWaitTableTest, HoldsTheCallsProgramsBlockIn) {
  std::set<std::string> names;
  for (const Row& r : kRows) names.insert(r.name);
  for (const char* required :
       {"nanosleep", "clock_nanosleep", "usleep", "sleep", "pthread_cond_wait", "pthread_cond_timedwait",
        "pthread_cond_clockwait", "sem_wait", "sem_timedwait", "sem_clockwait", "read", "readv", "recv",
        "recvfrom", "recvmsg", "poll", "ppoll", "select", "pselect", "epoll_wait", "epoll_pwait", "__read_chk",
        "__recv_chk", "__recvfrom_chk", "__poll_chk", "__ppoll_chk"}) {
    EXPECT_EQ(names.count(required), 1u) << required;
  }
  // Never: the loader and malloc lock mutexes; a wrapper would recurse.
  EXPECT_EQ(names.count("pthread_mutex_lock"), 0u);
}

// Every row resolves in this system's C library exactly as the shim resolves it (a versioned row
// by its version: pthread_cond_* must get the current ABI, not GLIBC_2.2.5's).
TEST(HostWaitTableTest, EveryRowResolvesInTheCLibrary) {
  for (const Row& r : kRows) {
    void* f = r.version != nullptr ? dlvsym(RTLD_DEFAULT, r.name, r.version) : dlsym(RTLD_DEFAULT, r.name);
    EXPECT_NE(f, nullptr) << r.name << (r.version != nullptr ? r.version : "");
  }
  EXPECT_EQ(dlvsym(RTLD_DEFAULT, "pthread_cond_wait", "GLIBC_2.3.2"), dlsym(RTLD_DEFAULT, "pthread_cond_wait"));
}

}  // namespace
}  // namespace gs
