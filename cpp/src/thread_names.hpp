// The one place a thread gets its trace name. Format v1 names threads by role and index
// (core: u<i> updaters, l<i> lookups; lifecycle: t<i> tools, d0, h0); format v2 takes any token,
// and gets what a real program has at hand: an opaque per-thread id (the hash of
// std::thread::id; unistd.h's gettid would drag R_OK and friends into every file). The role
// follows from the events.
#pragma once

#include <functional>
#include <string>
#include <thread>

namespace impl {

inline std::string trace_thread_name(char role, int index, int format = 1) {
    if (format == 2) return std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()) % 100000000007ULL);
    return role + std::to_string(index);
}

}  // namespace impl
