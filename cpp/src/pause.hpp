// Chaos-scheduler jitter at lock boundaries: with probability `jitter` a thread yields or sleeps
// a few microseconds, widening exactly the windows the lock scopes leave open. Per-thread RNG.
#pragma once

#include <cstdint>
#include <random>

namespace impl {

struct pause_state {
    std::mt19937_64 rng{0};
    double jitter = 0.0;
    std::uint32_t max_sleep_us = 50;
    std::uint32_t gap_us = 0;  // gap_pause(): sleep 0..gap_us (0: off)
};
pause_state& pause_config();  // this thread's
void pause_point();
// The gaps the code leaves between two lock scopes of one call (a shared phase released before the
// exclusive phase; a value read under one lock and used under another; an atomic stored after the
// lock that computed it was released). Those are where the protocol's races open, so a run can
// widen exactly them: the same points in every variant (in `final` the later scope is taken under
// the lock the fix holds across, so nothing can slip in). Off inside no_pause (jitter 0).
void gap_pause();

// No jitter inside this scope (the lifecycle runs QueueController calls at its own grain).
class no_pause {
public:
    no_pause() : _saved(pause_config().jitter) { pause_config().jitter = 0.0; }
    no_pause(const no_pause&) = delete;
    no_pause& operator=(const no_pause&) = delete;
    ~no_pause() { pause_config().jitter = _saved; }
private:
    double _saved;
};

}  // namespace impl
