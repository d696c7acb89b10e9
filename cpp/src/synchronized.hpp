// A traced copy of rocprofiler-sdk's common::Synchronized<T> (lib/common/synchronized.hpp):
// a value behind a std::shared_mutex with rlock (shared), wlock (exclusive) and ulock (shared
// lock, run `read`, RELEASE, then exclusive lock and run `write` if `read` returned false --
// not an atomic upgrade). Every acquire/release is a trace event (spmcheck/trace.hpp guards).
#pragma once

#include <shared_mutex>
#include <string>

#include "pause.hpp"
#include "spmcheck/trace.hpp"

namespace impl {

namespace tr = spmcheck::trace;

template <class T>
class synchronized {
public:
    explicit synchronized(const std::string& name) : _id(tr::register_lock(name)) {}

    // `f` returns a value (not void), so the pause before the release can follow it.
    template <class F>
    auto rlock(F&& f) const {
        pause_point();
        tr::shared_lock<std::shared_mutex> g(_m, _id);
        pause_point();
        auto r = f(static_cast<const T&>(_v));
        pause_point();
        return r;
    }
    template <class F>
    auto wlock(F&& f) {
        pause_point();
        tr::exclusive_lock<std::shared_mutex> g(_m, _id);
        pause_point();
        auto r = f(_v);
        pause_point();
        return r;
    }
    template <class R, class W>
    void ulock(R&& read, W&& write) {
        if (rlock(read)) return;  // shared phase released here: not an upgrade
        gap_pause();
        wlock(write);
    }

private:
    mutable std::shared_mutex _m;
    tr::lock_id _id;
    T _v{};
};

}  // namespace impl
