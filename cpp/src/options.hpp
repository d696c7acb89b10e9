// Command-line options of spmcheck-impl (both models).
#pragma once

#include <cstdint>
#include <string>

namespace impl {

struct options {
    std::string model = "core";
    std::string variant = "final";
    std::string output;
    int agents = 2;
    int updaters = 2;
    int lookups = 2;
    int ops = 200;          // core: enable/disable pairs per updater, serializer() calls per lookup
    std::uint64_t events = 0;  // core: > 0 -- every thread keeps calling until the trace holds this many
                               // events (ops is then ignored), so a run has a known size, not a guess
    double jitter = 0.2;    // probability of a pause at each lock boundary
    int hold_us = 20;       // core: max microseconds a holder keeps its reference
    int idle_us = 0;        // core: max microseconds a tool thread waits between a stop and its next start
    int holders = 1;        // core: contexts a tool thread starts before stopping any (>1: holder= ids)
    int gap_us = 50;        // core and lifecycle: max microseconds of a pause in each gap between two lock scopes (gap_pause)
    int queue_ramp_us = 0;  // core: > 0 -- queues are created over this many microseconds, each lookup
                            // thread one queue of one agent (0: all start at once, any agent per call)
    std::uint64_t seed = 0;
    int chunk = 0;          // 0: merge the per-thread buffers by seq; N: write runs of N unmerged
    int format = 1;         // trace format: 1 (threads named by role, sizes in the header) or 2 (core only)
    // lifecycle
    int contexts = 2;
    int tools = 2;
    int dispatches = 40;
    int max_ids = 4;
    int tool_ops = 30;
    bool timeouts = true;
    int sync_timeout_us = 2000;
};

int run_core(const options& o);
int run_lifecycle(const options& o);

}  // namespace impl
