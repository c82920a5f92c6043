#include "agent/nvtx/nvtx_injection.h"

#include <stdlib.h>

#include <cstring>
#include <cwchar>

#include "agent/core/agent.h"
#include "agent/core/config/config.h"
#include "agent/nvtx/nvtx_collector.h"

// Types only (nvToolsExt.h includes nvtxDetail/nvtxTypes.h): the agent is the implementation
// side and must not carry NVTX's own (inline) client.
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#undef NVTX_NO_IMPL

namespace gs {
namespace {

using nvtx::NvtxCollector;
using nvtx::RangeAttributes;

NvtxCollector& C() { return NvtxCollector::Instance(); }

// A wide message narrowed into `buffer` (ASCII kept, anything else '?'): no allocation.
size_t Narrow(const wchar_t* text, char* buffer, size_t capacity) {
  size_t n = 0;
  if (text == nullptr) return 0;
  while (n < capacity && text[n] != 0) {
    const wchar_t c = text[n];
    buffer[n] = (c > 0 && c < 128) ? static_cast<char>(c) : '?';
    ++n;
  }
  return n;
}

size_t BoundedLength(const char* text) {
  return text == nullptr ? 0 : strnlen(text, nvtx::kMaxNameBytes);
}

RangeAttributes FromAscii(const char* message, const void* domain = nullptr) {
  RangeAttributes a;
  a.name = message;
  a.name_len = BoundedLength(message);
  a.domain = domain;
  return a;
}

// A wide message, narrowed into `wide` (the caller's kMaxNameBytes buffer, alive as long as `a`).
RangeAttributes FromWide(const wchar_t* message, char* wide) {
  RangeAttributes a;
  a.name = wide;
  a.name_len = Narrow(message, wide, nvtx::kMaxNameBytes);
  return a;
}

// Event attributes to RangeAttributes; a wide message is narrowed into `wide` (the caller's
// stack buffer of kMaxNameBytes).
RangeAttributes FromEvent(const nvtxEventAttributes_t* e, const void* domain, char* wide) {
  RangeAttributes a;
  a.domain = domain;
  if (e == nullptr) return a;
  // Fields past `size` were not provided by the caller (older NVTX versions).
  if (e->size < offsetof(nvtxEventAttributes_t, message) + sizeof(e->message)) return a;
  a.category = e->category;
  if (e->colorType == NVTX_COLOR_ARGB) a.color = e->color;
  switch (e->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      a.name = e->message.ascii;
      a.name_len = BoundedLength(e->message.ascii);
      break;
    case NVTX_MESSAGE_TYPE_UNICODE:
      a.name = wide;
      a.name_len = Narrow(e->message.unicode, wide, nvtx::kMaxNameBytes);
      break;
    case NVTX_MESSAGE_TYPE_REGISTERED:
      a.registered = e->message.registered;
      break;
    default:
      break;
  }
  return a;
}

// --- CORE -----------------------------------------------------------------------------------
void MarkEx(const nvtxEventAttributes_t* e) {
  char wide[nvtx::kMaxNameBytes];
  C().Mark(FromEvent(e, nullptr, wide));
}
void MarkA(const char* message) { C().Mark(FromAscii(message)); }
void MarkW(const wchar_t* message) {
  char wide[nvtx::kMaxNameBytes];
  C().Mark(FromWide(message, wide));
}
nvtxRangeId_t RangeStartEx(const nvtxEventAttributes_t* e) {
  char wide[nvtx::kMaxNameBytes];
  return C().Start(FromEvent(e, nullptr, wide));
}
nvtxRangeId_t RangeStartA(const char* message) { return C().Start(FromAscii(message)); }
nvtxRangeId_t RangeStartW(const wchar_t* message) {
  char wide[nvtx::kMaxNameBytes];
  return C().Start(FromWide(message, wide));
}
void RangeEnd(nvtxRangeId_t id) { C().End(id); }
int RangePushEx(const nvtxEventAttributes_t* e) {
  char wide[nvtx::kMaxNameBytes];
  return C().Push(FromEvent(e, nullptr, wide));
}
int RangePushA(const char* message) { return C().Push(FromAscii(message)); }
int RangePushW(const wchar_t* message) {
  char wide[nvtx::kMaxNameBytes];
  return C().Push(FromWide(message, wide));
}
int RangePop() { return C().Pop(nullptr); }
void NameOsThreadA(uint32_t tid, const char* name) { C().NameThread(tid, name, BoundedLength(name)); }
void NameOsThreadW(uint32_t tid, const wchar_t* name) {
  char wide[nvtx::kMaxNameBytes];
  C().NameThread(tid, wide, Narrow(name, wide, sizeof(wide)));
}

// --- CORE2 (domains) --------------------------------------------------------------------------
const void* D(nvtxDomainHandle_t domain) { return reinterpret_cast<const void*>(domain); }

void DomainMarkEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* e) {
  char wide[nvtx::kMaxNameBytes];
  C().Mark(FromEvent(e, D(domain), wide));
}
nvtxRangeId_t DomainRangeStartEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* e) {
  char wide[nvtx::kMaxNameBytes];
  return C().Start(FromEvent(e, D(domain), wide));
}
void DomainRangeEnd(nvtxDomainHandle_t, nvtxRangeId_t id) { C().End(id); }
int DomainRangePushEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* e) {
  char wide[nvtx::kMaxNameBytes];
  return C().Push(FromEvent(e, D(domain), wide));
}
int DomainRangePop(nvtxDomainHandle_t domain) { return C().Pop(D(domain)); }
nvtxStringHandle_t DomainRegisterStringA(nvtxDomainHandle_t domain, const char* text) {
  return reinterpret_cast<nvtxStringHandle_t>(
      const_cast<void*>(nvtx::RegisterString(D(domain), text, text ? std::strlen(text) : 0)));
}
nvtxStringHandle_t DomainRegisterStringW(nvtxDomainHandle_t domain, const wchar_t* text) {
  char narrow[nvtx::kMaxNameBytes];
  const size_t n = Narrow(text, narrow, sizeof(narrow));
  return reinterpret_cast<nvtxStringHandle_t>(const_cast<void*>(nvtx::RegisterString(D(domain), narrow, n)));
}
nvtxDomainHandle_t DomainCreateA(const char* name) {
  return reinterpret_cast<nvtxDomainHandle_t>(
      const_cast<void*>(nvtx::CreateDomain(name, name ? std::strlen(name) : 0)));
}
nvtxDomainHandle_t DomainCreateW(const wchar_t* name) {
  char narrow[nvtx::kMaxNameBytes];
  const size_t n = Narrow(name, narrow, sizeof(narrow));
  return reinterpret_cast<nvtxDomainHandle_t>(const_cast<void*>(nvtx::CreateDomain(narrow, n)));
}
// Domains are never freed: ranges still in the rings refer to them.
void DomainDestroy(nvtxDomainHandle_t) {}
void Initialize(const void*) {}

// The table: which slot of which module gets which function.
struct Slot {
  NvtxCallbackModule module;
  unsigned int id;
  NvtxFunctionPointer function;
};
#define GS_NVTX_SLOT(MODULE, CBID, FUNCTION) \
  Slot{MODULE, CBID, reinterpret_cast<NvtxFunctionPointer>(&FUNCTION)}
const Slot kSlots[] = {
    GS_NVTX_SLOT(NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_MarkEx, MarkEx),
    GS_NVTX_SLOT(NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_MarkA, MarkA),
    GS_NVTX_SLOT(NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_MarkW, MarkW),
    GS_NVTX_SLOT(NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangeStartEx, RangeStartEx),
    GS_NVTX_SLOT(NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangeStartA, RangeStartA),
    GS_NVTX_SLOT(NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangeStartW, RangeStartW),
    GS_NVTX_SLOT(NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangeEnd, RangeEnd),
    GS_NVTX_SLOT(NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePushEx, RangePushEx),
    GS_NVTX_SLOT(NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePushA, RangePushA),
    GS_NVTX_SLOT(NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePushW, RangePushW),
    GS_NVTX_SLOT(NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePop, RangePop),
    GS_NVTX_SLOT(NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_NameOsThreadA, NameOsThreadA),
    GS_NVTX_SLOT(NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_NameOsThreadW, NameOsThreadW),
    GS_NVTX_SLOT(NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainMarkEx, DomainMarkEx),
    GS_NVTX_SLOT(NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangeStartEx, DomainRangeStartEx),
    GS_NVTX_SLOT(NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangeEnd, DomainRangeEnd),
    GS_NVTX_SLOT(NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangePushEx, DomainRangePushEx),
    GS_NVTX_SLOT(NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangePop, DomainRangePop),
    GS_NVTX_SLOT(NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRegisterStringA, DomainRegisterStringA),
    GS_NVTX_SLOT(NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRegisterStringW, DomainRegisterStringW),
    GS_NVTX_SLOT(NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainCreateA, DomainCreateA),
    GS_NVTX_SLOT(NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainCreateW, DomainCreateW),
    GS_NVTX_SLOT(NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainDestroy, DomainDestroy),
    GS_NVTX_SLOT(NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_Initialize, Initialize),
};
#undef GS_NVTX_SLOT

bool RecordingWanted() {
  const AgentState state = AgentCurrentState();
  if (state == AgentState::kDisabled || state == AgentState::kFinished) return false;
  if (state == AgentState::kActive) return true;
  // Not activated yet (NVTX before the first CUDA call): the same settings activation will read.
  const ConfigResult parsed = ParseConfig([](const char* name) -> const char* { return getenv(name); });
  return parsed.ok() && parsed.config.recording_wanted();
}

}  // namespace

int NvtxInitializeInjection(NvtxGetExportTable get_export_table) {
  if (get_export_table == nullptr || !RecordingWanted()) return 0;
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->struct_size < sizeof(NvtxExportTableCallbacks) ||
      callbacks->GetModuleFunctionTable == nullptr)
    return 0;
  if (!NvtxCollector::Instance().EnsureStarted()) return 0;
  // The version is advisory (NVTX ignores it today); tell it which one we were built against.
  const auto* version = static_cast<const NvtxExportTableVersionInfo*>(get_export_table(NVTX_ETID_VERSIONINFO));
  if (version != nullptr && version->struct_size >= sizeof(NvtxExportTableVersionInfo) &&
      version->SetInjectionNvtxVersion != nullptr)
    version->SetInjectionNvtxVersion(NVTX_VERSION);
  NvtxCallbackModule module = NVTX_CB_MODULE_INVALID;
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  bool any = false;
  for (const Slot& slot : kSlots) {
    if (slot.module != module) {
      module = slot.module;
      table = nullptr;
      size = 0;
      if (!callbacks->GetModuleFunctionTable(module, &table, &size)) table = nullptr;
    }
    if (table == nullptr || slot.id >= size || table[slot.id] == nullptr) continue;
    *table[slot.id] = slot.function;
    any = true;
  }
  return any ? 1 : 0;
}

}  // namespace gs
