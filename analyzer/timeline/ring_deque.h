// ring_deque.h — a double-ended queue in one growable ring buffer.
//
// The host history appends at the back and drops at the front millions of times; std::deque
// allocates a 512-byte block every 6 calls for 80-byte records, this allocates only when it
// grows (doubling). Indexable; index 0 is the front. Not thread-safe.
#ifndef GPUSTALL_ANALYZER_TIMELINE_RING_DEQUE_H_
#define GPUSTALL_ANALYZER_TIMELINE_RING_DEQUE_H_

#include <cstddef>
#include <utility>
#include <vector>

namespace gs::analyzer {

template <typename T>
class RingDeque {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return buf_[(head_ + i) & mask_]; }
  const T& operator[](size_t i) const { return buf_[(head_ + i) & mask_]; }
  T& front() { return (*this)[0]; }
  const T& front() const { return (*this)[0]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }

  void push_back(const T& v) {
    if (size_ == buf_.size()) Grow();
    buf_[(head_ + size_) & mask_] = v;
    ++size_;
  }
  void pop_front() {
    head_ = (head_ + 1) & mask_;
    --size_;
  }
  // Inserts keeping the order `less` (one insertion-sort step from the back: cheap when `v`
  // belongs near the end, the normal case for records that are only slightly out of order).
  template <typename Less>
  void insert_sorted(const T& v, Less less) {
    push_back(v);
    for (size_t i = size_ - 1; i > 0 && less((*this)[i], (*this)[i - 1]); --i)
      std::swap((*this)[i], (*this)[i - 1]);
  }

 private:
  void Grow() {
    std::vector<T> bigger(buf_.empty() ? 16 : buf_.size() * 2);
    for (size_t i = 0; i < size_; ++i) bigger[i] = std::move((*this)[i]);
    buf_.swap(bigger);
    head_ = 0;
    mask_ = buf_.size() - 1;
  }
  std::vector<T> buf_;
  size_t head_ = 0;
  size_t size_ = 0;
  size_t mask_ = 0;
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_TIMELINE_RING_DEQUE_H_
