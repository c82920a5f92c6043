// Line-table decoders on hand-built tables (the probe tests check them against real CPython).
#include "agent/python/line_table.h"

#include <gtest/gtest.h>

#include <vector>

namespace gs {
namespace {

int Line(PyLineTableFormat f, const std::vector<uint8_t>& t, int first, int addrq) {
  return PythonLineForOffset(f, t.data(), t.size(), first, addrq);
}

TEST(LineTableTest, Lnotab39AddsDeltasUpToTheOffset) {
  // (byte delta, line delta): +1 at 0, +1 at 6, +2 at 14.
  const std::vector<uint8_t> t = {0, 1, 6, 1, 8, 2};
  const auto f = PyLineTableFormat::kLnotab;
  EXPECT_EQ(Line(f, t, 10, -1), 10);
  EXPECT_EQ(Line(f, t, 10, 0), 11);
  EXPECT_EQ(Line(f, t, 10, 5), 11);
  EXPECT_EQ(Line(f, t, 10, 6), 12);
  EXPECT_EQ(Line(f, t, 10, 13), 12);
  EXPECT_EQ(Line(f, t, 10, 14), 14);
  EXPECT_EQ(Line(f, t, 10, 400), 14);
}

TEST(LineTableTest, Linetable310RangesAndNoLineMarker) {
  // [0,4) +1; [4,10) no line; [10,12) +0; empty range +3; [12,16) +0.
  const std::vector<uint8_t> t = {4, 1, 6, 0x80, 2, 0, 0, 3, 4, 0};
  const auto f = PyLineTableFormat::kLinetable310;
  EXPECT_EQ(Line(f, t, 5, -2), 5);
  EXPECT_EQ(Line(f, t, 5, 0), 6);
  EXPECT_EQ(Line(f, t, 5, 3), 6);
  EXPECT_EQ(Line(f, t, 5, 4), -1);
  EXPECT_EQ(Line(f, t, 5, 9), -1);
  EXPECT_EQ(Line(f, t, 5, 10), 6);
  EXPECT_EQ(Line(f, t, 5, 12), 9);
  EXPECT_EQ(Line(f, t, 5, 15), 9);
  EXPECT_EQ(Line(f, t, 5, 16), -1);
}

TEST(LineTableTest, Locations311EveryEntryKind) {
  const std::vector<uint8_t> t = {
      0xE9, 0x02,                    // code 13, 2 units, svarint +1          [0,4)   -> 101
      0xD0, 0x05, 0x07,              // code 10 one-line +0, 1 unit           [4,6)   -> 101
      0xDA, 0x01, 0x02,              // code 11 one-line +1, 3 units          [6,12)  -> 102
      0xF8,                          // code 15 no location, 1 unit           [12,14) -> -1
      0xF0, 0x07, 0x00, 0x01, 0x02,  // code 14 long form, svarint -3         [14,16) -> 99
      0x80, 0x11,                    // code 0 short form                     [16,18) -> 99
      0xE8, 0x48, 0x03,              // code 13, two-byte svarint +100        [18,20) -> 199
  };
  const auto f = PyLineTableFormat::kLocations;
  EXPECT_EQ(Line(f, t, 100, -2), 100);
  EXPECT_EQ(Line(f, t, 100, 0), 101);
  EXPECT_EQ(Line(f, t, 100, 2), 101);
  EXPECT_EQ(Line(f, t, 100, 4), 101);
  EXPECT_EQ(Line(f, t, 100, 6), 102);
  EXPECT_EQ(Line(f, t, 100, 10), 102);
  EXPECT_EQ(Line(f, t, 100, 12), -1);
  EXPECT_EQ(Line(f, t, 100, 14), 99);
  EXPECT_EQ(Line(f, t, 100, 16), 99);
  EXPECT_EQ(Line(f, t, 100, 18), 199);
  EXPECT_EQ(Line(f, t, 100, 20), -1);
}

TEST(LineTableTest, DamagedOrMissingTablesGiveNoLine) {
  const std::vector<uint8_t> no_sync = {0x05, 0x80};
  EXPECT_EQ(Line(PyLineTableFormat::kLocations, no_sync, 7, 0), -1);
  EXPECT_EQ(PythonLineForOffset(PyLineTableFormat::kLocations, nullptr, 0, 7, 4), -1);
  EXPECT_EQ(PythonLineForOffset(PyLineTableFormat::kLocations, nullptr, 0, 7, -2), 7);
  const std::vector<uint8_t> odd = {4};  // half a pair: ignored
  EXPECT_EQ(Line(PyLineTableFormat::kLinetable310, odd, 7, 0), -1);
}

}  // namespace
}  // namespace gs
