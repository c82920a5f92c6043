// symbols.cc — __device__ / __constant__ variables: host shadow -> device memory.
#include <map>
#include <mutex>
#include <string>

#include "driver/internal.h"

namespace simgpu {
namespace {

struct Symbol {
  std::string name;
  size_t size;
  void* device = nullptr;  // allocated on first use
};

struct SymbolTable {
  std::mutex mu;
  std::map<const void*, Symbol> by_host;
};

SymbolTable& Table() {
  static SymbolTable* t = new SymbolTable;  // never freed: registration runs before main
  return *t;
}

}  // namespace

void RegisterSymbol(const void* host_var, const char* name, size_t size) {
  SymbolTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  t.by_host.emplace(host_var, Symbol{name ? name : "", size});
}

cudaError_t SymbolAddress(const void* host_var, void** dev_ptr, size_t* size) {
  SymbolTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.by_host.find(host_var);
  if (it == t.by_host.end()) return cudaErrorInvalidSymbol;
  Symbol& s = it->second;
  if (s.device == nullptr) {
    cudaError_t e = DeviceMalloc(0, s.size ? s.size : 1, false, false, 0, &s.device);
    if (e != cudaSuccess) return e;
  }
  if (dev_ptr) *dev_ptr = s.device;
  if (size) *size = s.size;
  return cudaSuccess;
}

}  // namespace simgpu
