// A module built by clang for the unit index's test (dwarf_units_test.cc): clang writes no
// .debug_aranges, so its units are found by their own entries. Templates and inline functions
// give this unit code in several sections (one range list); see CMakeLists.txt for the builds.
#include <algorithm>
#include <vector>

template <typename T>
T SumOfSorted(std::vector<T> values) {
  std::sort(values.begin(), values.end());
  T sum = 0;
  for (const T& v : values) sum += v;
  return sum;
}

int FixtureA(int n) {
  std::vector<int> values;
  for (int i = 0; i < n; ++i) values.push_back((i * 7919) % 101);
  return SumOfSorted(values);
}

double FixtureADouble(int n) { return SumOfSorted(std::vector<double>(static_cast<size_t>(n), 0.5)); }
