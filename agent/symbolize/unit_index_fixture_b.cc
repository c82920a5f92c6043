// The second unit of the clang-built fixture (unit_index_fixture_a.cc says why): one function,
// one contiguous range (DW_AT_low_pc and DW_AT_high_pc).
int FixtureB(int x) {
  int y = x * 3;
  if (y > 100) y -= 7;
  return y + 1;
}
