// The one place a thread gets its trace name. Format v1 names threads by role and index
// (core: u<i> updaters, l<i> lookups; lifecycle: t<i> tools, d0, h0); format v2 takes any token,
// so this becomes `return std::to_string(gettid());` then.
#pragma once

#include <string>

namespace impl {

inline std::string trace_thread_name(char role, int index) { return role + std::to_string(index); }

}  // namespace impl
