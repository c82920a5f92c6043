// enum_tie.h — ties a C++ enum to the trace schema's enum (gstrace.proto) in both directions, at
// compile time.
//
// The agent (agent/record/events.h) and the model (analyzer/model/types.h) keep small scoped enums
// of their own with the schema's values, so that converting is a cast and their headers need no
// protobuf. One list macro names the correspondence once, each pair and each schema value that
// has no C++ counterpart on purpose:
//
//   #define GS_API_SOURCES(PAIR, SCHEMA_ONLY)  (one line per pair, continued with backslashes)
//     SCHEMA_ONLY(pb::API_SOURCE_UNSPECIFIED)
//     PAIR(ApiSource::kInterposer, pb::API_SOURCE_INTERPOSER)
//     PAIR(ApiSource::kCuptiCallback, pb::API_SOURCE_CUPTI_CALLBACK)
//   GS_ENUM_TIE(ApiSource, pb, ApiSource, GS_API_SOURCES)
//
// and GS_ENUM_TIE makes three checks of it:
//   - each pair has one value (static_assert): a value renumbered on one side fails;
//   - a switch over the C++ enum with a case per pair: an enumerator added to the C++ enum alone
//     is a missing case;
//   - a switch over the schema's enum with a case per pair and per SCHEMA_ONLY value: a value
//     added to the .proto alone is a missing case.
// A missing case is -Wswitch; the user makes it an error around its GS_ENUM_TIE lines (GCC and
// clang both read these pragmas), so either side growing alone fails the build where the list is:
//
//   #pragma GCC diagnostic push
//   #pragma GCC diagnostic error "-Wswitch"
//   GS_ENUM_TIE(...)
//   #pragma GCC diagnostic pop
//
// (Written out, not in a macro: GCC 12 may ignore a diagnostic _Pragma that a macro expands to.)
#ifndef GPUSTALL_PROTO_ENUM_TIE_H_
#define GPUSTALL_PROTO_ENUM_TIE_H_

#define GS_ENUM_TIE_SAME_(ours, schema)                                        \
  static_assert(static_cast<int>(ours) == static_cast<int>(schema),           \
                #ours " must have the value of " #schema);
#define GS_ENUM_TIE_NOTHING_(schema)
#define GS_ENUM_TIE_CASE_OURS_(ours, schema) case ours:
#define GS_ENUM_TIE_CASE_SCHEMA_(ours, schema) case schema:
#define GS_ENUM_TIE_CASE_SCHEMA_ONLY_(schema) case schema:

// `Ours` is the C++ enum, `ns::Name` the schema's (protoc's open-enum sentinels are part of it).
// The two Tied() overloads are never called: they exist to be compiled.
#define GS_ENUM_TIE(Ours, ns, Name, LIST)                                     \
  LIST(GS_ENUM_TIE_SAME_, GS_ENUM_TIE_NOTHING_)                               \
  constexpr bool Tied(Ours v) {                                               \
    switch (v) {                                                              \
      LIST(GS_ENUM_TIE_CASE_OURS_, GS_ENUM_TIE_NOTHING_)                      \
      return true;                                                            \
    }                                                                         \
    return false;                                                             \
  }                                                                           \
  constexpr bool Tied(ns::Name v) {                                           \
    switch (v) {                                                              \
      LIST(GS_ENUM_TIE_CASE_SCHEMA_, GS_ENUM_TIE_CASE_SCHEMA_ONLY_)           \
      case ns::Name##_INT_MIN_SENTINEL_DO_NOT_USE_:                           \
      case ns::Name##_INT_MAX_SENTINEL_DO_NOT_USE_:                           \
        return true;                                                          \
    }                                                                         \
    return false;                                                             \
  }

#endif  // GPUSTALL_PROTO_ENUM_TIE_H_
