// Cost of spmcheck/trace.hpp per event, in ns. Build twice (make bench): with tracing and with
// -DSPMCHECK_TRACE=0; the difference is the overhead. Usage: trace-overhead [threads] [events/thread]
//   event:      one typed event (refcount_read) in a loop, no lock
//   lock pair:  exclusive_lock<std::mutex> on a per-thread mutex (2 events: acquire + release)
//   fetch_add:  baseline, one relaxed fetch_add on a shared std::atomic (what every event pays)
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "spmcheck/trace.hpp"

namespace tr = spmcheck::trace;

template <class F>
double per_op_ns(int threads, long n, F body) {
    std::vector<std::thread> ts;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < threads; ++i)
        ts.emplace_back([&, i] {
            tr::set_thread_name("u" + std::to_string(i));
            body(n);
        });
    for (auto& t : ts) t.join();
    auto dt = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    return dt / (static_cast<double>(n) * threads);
}

int main(int argc, char** argv) {
    int threads = argc > 1 ? std::atoi(argv[1]) : 1;
    long n = argc > 2 ? std::atol(argv[2]) : 2000000;
    volatile long sink_guard = 0;
    double ev = per_op_ns(threads, n, [&](long k) {
        for (long j = 0; j < k; ++j) tr::refcount_read(0, j);
        sink_guard = sink_guard + 1;
    });
    tr::lock_id id = tr::register_lock("queues");
    double lk = per_op_ns(threads, n / 2, [&](long k) {
        std::mutex m;
        for (long j = 0; j < k; ++j) { tr::exclusive_lock<std::mutex> g(m, id); }
    });
    std::atomic<std::uint64_t> counter{0};
    double fa = per_op_ns(threads, n, [&](long k) {
        for (long j = 0; j < k; ++j) counter.fetch_add(1, std::memory_order_relaxed);
    });
    std::printf("{\"trace\": %d, \"threads\": %d, \"events_per_thread\": %ld, \"event_ns\": %.2f, "
                "\"lock_pair_ns\": %.2f, \"fetch_add_ns\": %.2f, \"recorded\": %llu}\n",
                SPMCHECK_TRACE, threads, n, ev, lk, fa, static_cast<unsigned long long>(tr::events()));
    return 0;
}
