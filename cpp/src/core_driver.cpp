// Core run: updater threads u<i> hold references (enable a scope, hold, disable the same scope,
// like a context start/stop) while lookup threads l<i> call serializer() for random agents (with
// --queue-ramp-us: each for its own queue's agent, from the queue's creation on).
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

#include "options.hpp"
#include "pause.hpp"
#include "queue_controller.hpp"
#include "thread_names.hpp"

namespace impl {

namespace {
void seed_thread(const options& o, char role, int i) {
    auto& p = pause_config();
    p.rng.seed(o.seed * 1000003u + static_cast<std::uint64_t>(role) * 131u + static_cast<std::uint64_t>(i));
    p.jitter = o.jitter;
    p.gap_us = static_cast<std::uint32_t>(o.gap_us);
    spmcheck::trace::set_thread_name(trace_thread_name(role, i, o.format));
}

// Every thread starts its first call at once: the tool's first enable_serialization() meets the
// application's first queue creations (the first serializer() lookup of each agent), which is
// where the SDK's startup races live -- the serializer map only ever gains entries, so a stale
// insert can happen only on an agent's first lookup. Threads spin (yielding) until all arrived.
// With --queue-ramp-us the queue threads then wait for their queue's creation time (run_core).
class start_line {
public:
    explicit start_line(int n) : _left(n) {}
    void arrive_and_wait() {
        _left.fetch_sub(1, std::memory_order_acq_rel);
        while (_left.load(std::memory_order_acquire) > 0) std::this_thread::yield();
    }
private:
    std::atomic<int> _left;
};

// --events N: a thread starts another call while the trace holds fewer than N events (each
// thread checks before each call, so a run ends with N plus the calls under way). The check is a
// relaxed load of the sequence counter, between calls: no lock scope changes.
bool more(const options& o, int k) {
    return o.events ? spmcheck::trace::events() < o.events : k < o.ops;
}

void sleep_upto(int max_us) {
    if (max_us <= 0) return;
    auto us = std::uniform_int_distribution<int>(0, max_us)(pause_config().rng);
    std::this_thread::sleep_for(std::chrono::microseconds(us));
}
void hold(const options& o) { sleep_upto(o.hold_us); }
// --idle-us: a tool thread's time between stopping a context and starting the next. With many
// tool threads and no idle time an agent's count seldom returns to 0 (someone always holds it);
// idle time lets counts cross 0 throughout the run, where the count-crossing races live.
void idle(const options& o) { sleep_upto(o.idle_us); }
}  // namespace

int run_core(const options& o) {
    core_variant v;
    if (!core_variant_named(o.variant, v)) {
        std::fprintf(stderr, "spmcheck-impl: unknown core variant '%s' (known: %s)\n", o.variant.c_str(),
                     core_variant_names());
        return 2;
    }
    QueueController qc(v, o.agents);
    const std::string meta = " seed=" + std::to_string(o.seed) +
                             (o.events ? " events=" + std::to_string(o.events) : " ops=" + std::to_string(o.ops)) +
                             " source=spmcheck-impl-cpp";
    if (o.holders > 1) spmcheck::trace::holder_prefix(o.format == 2 ? "ctx" : "c");
    if (o.format == 2)
        spmcheck::trace::core_header_v2(o.variant, meta);  // no sizes: ids are discovered on first use
    else
        spmcheck::trace::core_header(o.variant, o.agents, o.updaters, o.lookups, meta);
    const auto& ids = qc.agents();
    std::vector<std::thread> threads;
    start_line start(o.updaters + o.lookups);
    for (int i = 0; i < o.updaters; ++i)
        threads.emplace_back([&, i] {
            seed_thread(o, 'u', i);
            auto& rng = pause_config().rng;
            start.arrive_and_wait();
            auto pick = [&] {
                agent_handle_set_t scope;  // empty = all agents
                if (!v.global_flag) {
                    // `all` or any non-empty subset, uniformly over the 2^agents choices
                    auto m = std::uniform_int_distribution<std::uint64_t>(0, (1u << o.agents) - 1)(rng);
                    for (int a = 0; a < o.agents; ++a)
                        if (m >> a & 1u) scope.insert(ids[static_cast<std::size_t>(a)]);
                }
                return scope;
            };
            if (o.holders <= 1) {  // one reference at a time; the thread is its own holder
                for (int k = 0; more(o, k); ++k) {
                    auto scope = pick();
                    qc.enable_serialization(scope);
                    hold(o);
                    qc.disable_serialization(scope);
                    pause_point();
                    idle(o);
                }
                return;
            }
            // --holders H: the thread starts H contexts (each its own holder and agent set) before
            // stopping any, then stops them in a random order, as a tool with several contexts does
            for (int k = 0; more(o, k); k += o.holders) {
                std::vector<std::pair<std::int64_t, agent_handle_set_t>> held;
                for (int j = 0; j < o.holders; ++j) {
                    held.emplace_back(static_cast<std::int64_t>(i) * o.holders + j, pick());
                    spmcheck::trace::set_holder(held.back().first);
                    qc.enable_serialization(held.back().second);
                    hold(o);
                }
                std::shuffle(held.begin(), held.end(), rng);
                for (auto& h : held) {
                    spmcheck::trace::set_holder(h.first);
                    qc.disable_serialization(h.second);
                    pause_point();
                }
                idle(o);
            }
        });
    for (int i = 0; i < o.lookups; ++i)
        threads.emplace_back([&, i] {
            seed_thread(o, 'l', i);
            auto& rng = pause_config().rng;
            start.arrive_and_wait();
            if (o.queue_ramp_us > 0) {
                // --queue-ramp-us: this thread is one queue, of agent i mod agents (every agent
                // gets queues), created at a random time of the ramp, as an application creates
                // its queues over a run (HIP: on a stream's first launch on a device) while tools
                // start and stop contexts. create_queue's serializer() is the agent's first lookup
                // only for its agent's first queue, so agents' first lookups (the only inserts)
                // spread over the run instead of all meeting the tools' first start.
                sleep_upto(o.queue_ramp_us);
                const auto& agent = ids[static_cast<std::size_t>(i % o.agents)];
                for (int k = 0; more(o, k); ++k) {
                    qc.serializer(agent);
                    pause_point();
                }
                return;
            }
            for (int k = 0; more(o, k); ++k) {
                auto a = std::uniform_int_distribution<int>(0, o.agents - 1)(rng);
                qc.serializer(ids[static_cast<std::size_t>(a)]);
                pause_point();
            }
        });
    for (auto& t : threads) t.join();
    return 0;
}

}  // namespace impl
