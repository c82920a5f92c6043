// The code table on fake CPython objects laid out like 3.12's: interning, identity when an
// address is reused, copies that outlive the objects, and counted losses when full.
#include "agent/python/code_table.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "agent/python/fault_guard.h"
#include "agent/python/python_symbolizer.h"
#include "agent/python/tests/fake_python.h"

namespace gs {
namespace {

// Intern must run under a FaultScope (it reads interpreter memory). `by_version`: as the reader
// asks on 3.12+.
uint32_t Intern(PythonCodeTable& table, uintptr_t code, bool by_version = false) {
  FaultScope scope;
  volatile uint32_t id = 0;
  FaultScopeBegin(&scope);
  if (sigsetjmp(scope.env, 0) == 0) {
    FaultScopeArm(&scope);
    id = table.Intern(code, by_version);
    FaultScopeEnd(&scope);
  }
  return id;
}
uint32_t InternByVersion(PythonCodeTable& table, uintptr_t code) { return Intern(table, code, true); }

class CodeTableTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(InstallFaultGuard()); }
  void TearDown() override { table_.Release(); }
  FakeHeap heap_;
  PythonCodeTable table_;
};

TEST_F(CodeTableTest, InternsOnceAndCopiesNamesAndLineTable) {
  ASSERT_TRUE(table_.Init(64, 1 << 16, heap_.layout(), heap_.types()));
  const uintptr_t code = heap_.Code(heap_.Str(U"/src/train.py"), heap_.Str(U"Model.forward"),
                                    heap_.Bytes({0xE9, 0x02}), 40);
  const uint32_t id = Intern(table_, code);
  ASSERT_NE(id, 0u);
  EXPECT_EQ(Intern(table_, code), id);
  EXPECT_EQ(table_.stats().interned, 1u);

  PythonSymbolizer symbolizer(table_);
  PythonFrameRef ref;
  ref.code_id = id;
  ref.ends_eval_run = 0;
  ref.addrq = 2;
  PythonSymbol sym;
  ASSERT_TRUE(symbolizer.Symbolize(ref, &sym));
  EXPECT_EQ(sym.filename, "/src/train.py");
  EXPECT_EQ(sym.function, "Model.forward");
  EXPECT_EQ(sym.line, 41);  // location table entry "+1" covering bytes [0,4)
  EXPECT_EQ(sym.firstlineno, 40);
}

TEST_F(CodeTableTest, NonAsciiNamesBecomeUtf8) {
  ASSERT_TRUE(table_.Init(64, 1 << 16, heap_.layout(), heap_.types()));
  const uintptr_t code = heap_.Code(heap_.Str(U"caf\u00e9.py"),
                                    heap_.Str(U"\u95a2\u6570\U0001F600"), heap_.Bytes({}), 1);
  PythonCodeInfo info;
  ASSERT_TRUE(table_.Lookup(Intern(table_, code), &info));
  EXPECT_EQ(std::string(info.filename, info.filename_len), "caf\xc3\xa9.py");
  EXPECT_EQ(std::string(info.function, info.function_len),
            "\xe9\x96\xa2\xe6\x95\xb0\xf0\x9f\x98\x80");
}

TEST_F(CodeTableTest, ReusedAddressWithNewContentsGetsANewId) {
  ASSERT_TRUE(table_.Init(64, 1 << 16, heap_.layout(), heap_.types()));
  const uintptr_t file = heap_.Str(U"<string>");
  const uintptr_t name = heap_.Str(U"<module>");
  const uintptr_t code = heap_.Code(file, name, heap_.Bytes({0xE9, 0x02}), 1);
  const uint32_t first = Intern(table_, code);
  // The code object dies; a new one lands at the same address with another line table that
  // itself reuses the old table's address but not its bytes.
  const uintptr_t table_obj = heap_.layout().code_linetable;
  const uintptr_t old_table = *reinterpret_cast<uintptr_t*>(code + table_obj);
  FakeHeap::Put<uint8_t>(old_table, heap_.layout().bytes_data + 1, 0x04);
  const uint32_t second = Intern(table_, code);
  EXPECT_NE(second, first);
  // And another firstlineno, same table.
  FakeHeap::Put<int32_t>(code, heap_.layout().code_firstlineno, 7);
  const uint32_t third = Intern(table_, code);
  EXPECT_NE(third, first);
  EXPECT_NE(third, second);
  // The first contents again, at that address: the first id, though the address's hint now
  // names the third.
  FakeHeap::Put<uint8_t>(old_table, heap_.layout().bytes_data + 1, 0x02);
  FakeHeap::Put<int32_t>(code, heap_.layout().code_firstlineno, 1);
  EXPECT_EQ(Intern(table_, code), first);
  EXPECT_EQ(table_.stats().interned, 3u);
  PythonCodeInfo info;
  ASSERT_TRUE(table_.Lookup(first, &info));  // old copies stay valid for old captures
  EXPECT_EQ(info.firstlineno, 1);
  EXPECT_EQ(info.linetable[1], 0x02);
}

// The fingerprint reads whole words: a short range as the word that ends with it, whose other bytes
// lie in the object's header. Every byte of a name or table up to 16 long is in the identity, and
// none of the header's: a bytes object's cached hash (the word before its data), filled in lazily
// by the interpreter, leaves the id alone.
TEST_F(CodeTableTest, EveryByteOfAShortNameOrTableCountsAndTheHeaderDoesNot) {
  ASSERT_TRUE(table_.Init(4096, 1 << 20, heap_.layout(), heap_.types()));
  const PythonLayout& l = heap_.layout();
  for (int len = 0; len <= 16; ++len) {
    std::vector<uint8_t> bytes(len);
    for (int i = 0; i < len; ++i) bytes[i] = static_cast<uint8_t>(0x41 + i);
    std::u32string text(bytes.begin(), bytes.end());
    const uintptr_t name = heap_.Str(text.empty() ? U"f" : text);
    const uintptr_t linetable = heap_.Bytes(bytes);
    const uintptr_t code = heap_.Code(heap_.Str(U"/src/m.py"), name, linetable, 3);
    const uint32_t id = Intern(table_, code);
    ASSERT_NE(id, 0u) << len;
    FakeHeap::Put<int64_t>(linetable, l.bytes_data - 8, 0x1234567890abcdefLL);
    EXPECT_EQ(Intern(table_, code), id) << "a header byte changed the id of a table of " << len;
    for (int i = 0; i < len; ++i) {
      auto* table_byte = reinterpret_cast<uint8_t*>(linetable + l.bytes_data + i);
      *table_byte ^= 0x20;
      EXPECT_NE(Intern(table_, code), id) << "table byte " << i << " of " << len;
      *table_byte ^= 0x20;
      auto* name_byte = reinterpret_cast<uint8_t*>(name + l.unicode_ascii_size + i);
      *name_byte ^= 0x20;
      EXPECT_NE(Intern(table_, code), id) << "name byte " << i << " of " << len;
      *name_byte ^= 0x20;
      EXPECT_EQ(Intern(table_, code), id) << len;
    }
  }
}

// With a version, a known (address, co_version) answers without reading the identity again: the
// same object cannot have changed. A new object at that address has a new version and is read in
// full, so its new contents get a new id; and version 0 (the counter wrapped) or a caller that
// does not ask for versions always takes the full identity.
TEST_F(CodeTableTest, CodeVersionNamesOneObjectAndANewVersionIsReadInFull) {
  ASSERT_TRUE(table_.Init(64, 1 << 16, heap_.layout(), heap_.types()));
  const PythonLayout& l = heap_.layout();
  ASSERT_NE(l.code_version, kNoField);  // 3.12's layout
  const uintptr_t code = heap_.Code(heap_.Str(U"<string>"), heap_.Str(U"<module>"), heap_.Bytes({0xE9, 0x02}), 1);
  FakeHeap::Put<uint32_t>(code, l.code_version, 41);
  const uint32_t first = InternByVersion(table_, code);
  ASSERT_NE(first, 0u);
  EXPECT_EQ(InternByVersion(table_, code), first);
  // Contents that only a full read would see (impossible for a live object: the proof that a hit
  // reads no more than the version).
  const uintptr_t line_table = *reinterpret_cast<uintptr_t*>(code + l.code_linetable);
  FakeHeap::Put<uint8_t>(line_table, l.bytes_data + 1, 0x04);
  EXPECT_EQ(InternByVersion(table_, code), first);
  EXPECT_EQ(table_.stats().interned, 1u);
  // The object "dies" and a new one takes its address, with the next version: read in full.
  FakeHeap::Put<uint32_t>(code, l.code_version, 42);
  const uint32_t second = InternByVersion(table_, code);
  EXPECT_NE(second, first);
  EXPECT_EQ(InternByVersion(table_, code), second);
  // Without versions (3.9-3.11, or 3.13 beside a subinterpreter) the identity is read every time.
  FakeHeap::Put<int32_t>(code, l.code_firstlineno, 7);
  const uint32_t third = Intern(table_, code);
  EXPECT_NE(third, second);
  // Version 0: not an identity; the full read decides.
  FakeHeap::Put<uint32_t>(code, l.code_version, 0);
  EXPECT_EQ(InternByVersion(table_, code), third);
  FakeHeap::Put<int32_t>(code, l.code_firstlineno, 8);
  EXPECT_NE(InternByVersion(table_, code), third);
  PythonCodeInfo info;
  ASSERT_TRUE(table_.Lookup(first, &info));
  EXPECT_EQ(info.linetable[1], 0x02);
  ASSERT_TRUE(table_.Lookup(second, &info));
  EXPECT_EQ(info.linetable[1], 0x04);
}

// Many versions at one address (exec in a loop): each its own entry, all found again.
TEST_F(CodeTableTest, ManyVersionsAtOneAddressEachKeepTheirId) {
  ASSERT_TRUE(table_.Init(256, 1 << 16, heap_.layout(), heap_.types()));
  const PythonLayout& l = heap_.layout();
  const uintptr_t code = heap_.Code(heap_.Str(U"<string>"), heap_.Str(U"f"), heap_.Bytes({0xE9, 0x02}), 1);
  std::vector<uint32_t> ids;
  for (uint32_t v = 1; v <= 50; ++v) {
    FakeHeap::Put<uint32_t>(code, l.code_version, v);
    FakeHeap::Put<int32_t>(code, l.code_firstlineno, static_cast<int32_t>(v));
    ids.push_back(InternByVersion(table_, code));
  }
  for (uint32_t v = 1; v <= 50; ++v) {
    FakeHeap::Put<uint32_t>(code, l.code_version, v);
    FakeHeap::Put<int32_t>(code, l.code_firstlineno, static_cast<int32_t>(v));
    EXPECT_EQ(InternByVersion(table_, code), ids[v - 1]) << v;
    PythonCodeInfo info;
    ASSERT_TRUE(table_.Lookup(ids[v - 1], &info));
    EXPECT_EQ(info.firstlineno, static_cast<int32_t>(v));
  }
}

TEST_F(CodeTableTest, FullTableDropsAndCounts) {
  ASSERT_TRUE(table_.Init(16, 1 << 16, heap_.layout(), heap_.types()));
  const uintptr_t file = heap_.Str(U"f.py");
  const uintptr_t lt = heap_.Bytes({0x80, 0x00});
  int stored = 0, dropped = 0;
  for (int i = 0; i < 40; ++i) {
    const uintptr_t code = heap_.Code(file, heap_.Str(U"fn"), lt, i);
    (Intern(table_, code) != 0 ? stored : dropped)++;
  }
  EXPECT_EQ(stored, 16);
  EXPECT_EQ(dropped, 24);
  EXPECT_EQ(table_.stats().table_full, 24u);
}

TEST_F(CodeTableTest, ArenaExhaustionStillPublishesWithoutStrings) {
  ASSERT_TRUE(table_.Init(64, 8, heap_.layout(), heap_.types()));
  const uintptr_t code = heap_.Code(heap_.Str(U"a_rather_long_file_name.py"), heap_.Str(U"f"),
                                    heap_.Bytes({0x80, 0x00}), 3);
  PythonCodeInfo info;
  ASSERT_TRUE(table_.Lookup(Intern(table_, code), &info));
  EXPECT_EQ(info.filename_len, 0u);
  EXPECT_EQ(table_.stats().arena_full, 1u);
}

TEST_F(CodeTableTest, NonStringNamesAndNonBytesTablesAreRejected) {
  ASSERT_TRUE(table_.Init(64, 1 << 16, heap_.layout(), heap_.types()));
  const uintptr_t not_bytes = heap_.Str(U"xx");
  const uintptr_t code = heap_.Code(heap_.Str(U"f.py"), heap_.Str(U"f"), not_bytes, 1);
  EXPECT_EQ(Intern(table_, code), 0u);
  EXPECT_EQ(table_.stats().unreadable, 1u);
}

TEST_F(CodeTableTest, UnknownIdsDoNotResolve) {
  ASSERT_TRUE(table_.Init(64, 1 << 16, heap_.layout(), heap_.types()));
  PythonCodeInfo info;
  EXPECT_FALSE(table_.Lookup(0, &info));
  EXPECT_FALSE(table_.Lookup(5, &info));
  EXPECT_FALSE(table_.Lookup(1000000, &info));
}

}  // namespace
}  // namespace gs
