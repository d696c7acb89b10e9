// spmcheck-impl: the rocprofiler-sdk serialization protocol (core) and SPM context lifecycle in
// C++, writing a spmcheck format-v1 trace. Exit: 0 written, 2 bad arguments or unwritable output.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "options.hpp"
#include "pause.hpp"
#include "spmcheck/trace.hpp"

namespace impl {

pause_state& pause_config() {
    thread_local pause_state p;
    return p;
}

void pause_point() {
    auto& p = pause_config();
    if (p.jitter <= 0.0) return;
    std::uniform_real_distribution<double> u(0.0, 1.0);
    if (u(p.rng) >= p.jitter) return;
    if (u(p.rng) < 0.5) {
        std::this_thread::yield();
    } else {
        auto us = std::uniform_int_distribution<std::uint32_t>(0, p.max_sleep_us)(p.rng);
        std::this_thread::sleep_for(std::chrono::microseconds(us));
    }
}

void gap_pause() {
    auto& p = pause_config();
    if (p.jitter <= 0.0 || p.gap_us == 0) return;
    std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<std::uint32_t>(0, p.gap_us)(p.rng)));
}

}  // namespace impl

namespace {

const char* kUsage =
    "usage: spmcheck-impl --model core|lifecycle --variant V -o FILE [--seed N] [--jitter P] [--format 1|2 (core)]\n"
    "  [--chunk N]: write each thread's records in runs of N, unmerged (check with --reorder-window)\n"
    "  core:      [--agents N<=8] [--updaters N] [--lookups N] [--threads N (each role)] [--ops N | --events N] [--hold-us N] [--idle-us N] [--gap-us N] [--holders N]\n"
    "             [--queue-ramp-us N]: queues created over N us, each lookup thread one queue of one agent\n"
    "  lifecycle: [--agents N<=4] [--contexts N<=4] [--tools N<=8] [--dispatches N<=256] [--ops N]\n"
    "             [--max-ids N] [--timeouts 0|1] [--sync-timeout-us N] [--gap-us N]\n";

bool parse_int(const char* s, long long lo, long long hi, long long& out) {
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(s, &end, 10);
    if (errno || !end || *end || end == s || v < lo || v > hi) return false;
    out = v;
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    impl::options o;
    bool ops_given = false;
    for (int i = 1; i < argc; ++i) {
        std::string k = argv[i];
        if (k == "-h" || k == "--help") { std::fputs(kUsage, stdout); return 0; }
        if (i + 1 >= argc) { std::fprintf(stderr, "spmcheck-impl: %s needs a value\n%s", k.c_str(), kUsage); return 2; }
        const char* val = argv[++i];
        long long n = 0;
        auto num = [&](long long lo, long long hi) {
            if (!parse_int(val, lo, hi, n)) {
                std::fprintf(stderr, "spmcheck-impl: %s must be an integer in %lld..%lld (got '%s')\n", k.c_str(), lo, hi, val);
                std::exit(2);
            }
            return static_cast<int>(n);
        };
        if (k == "--model") o.model = val;
        else if (k == "--variant") o.variant = val;
        else if (k == "-o" || k == "--output") o.output = val;
        else if (k == "--agents") o.agents = num(1, 8);
        else if (k == "--updaters") o.updaters = num(0, 64);
        else if (k == "--lookups") o.lookups = num(0, 64);
        else if (k == "--threads") o.updaters = o.lookups = num(1, 64);
        else if (k == "--ops") { o.ops = o.tool_ops = num(1, 10000000); ops_given = true; }
        else if (k == "--events") { if (!parse_int(val, 1, (1LL << 40), n)) { std::fprintf(stderr, "spmcheck-impl: --events must be an integer in 1..2^40\n"); return 2; } o.events = static_cast<std::uint64_t>(n); }
        else if (k == "--hold-us") o.hold_us = num(0, 1000000);
        else if (k == "--idle-us") o.idle_us = num(0, 1000000);
        else if (k == "--gap-us") o.gap_us = num(0, 1000000);
        else if (k == "--queue-ramp-us") o.queue_ramp_us = num(0, 10000000);
        else if (k == "--holders") o.holders = num(1, 64);
        else if (k == "--seed") { if (!parse_int(val, 0, (1LL << 62), n)) { std::fprintf(stderr, "spmcheck-impl: bad --seed\n"); return 2; } o.seed = static_cast<std::uint64_t>(n); }
        else if (k == "--jitter") {
            char* end = nullptr;
            o.jitter = std::strtod(val, &end);
            if (!end || *end || o.jitter < 0 || o.jitter > 1) { std::fprintf(stderr, "spmcheck-impl: --jitter must be in [0, 1]\n"); return 2; }
        }
        else if (k == "--format") o.format = num(1, 2);
        else if (k == "--chunk") o.chunk = num(0, 100000000);
        else if (k == "--contexts") o.contexts = num(1, 4);
        else if (k == "--tools") o.tools = num(1, 8);
        else if (k == "--dispatches") o.dispatches = num(1, 256);
        else if (k == "--max-ids") o.max_ids = num(0, 64);
        else if (k == "--timeouts") o.timeouts = num(0, 1) != 0;
        else if (k == "--sync-timeout-us") o.sync_timeout_us = num(1, 10000000);
        else { std::fprintf(stderr, "spmcheck-impl: unknown option %s\n%s", k.c_str(), kUsage); return 2; }
    }
    if (!ops_given) o.tool_ops = 30;
    if (o.output.empty()) { std::fprintf(stderr, "spmcheck-impl: -o FILE is required\n%s", kUsage); return 2; }
    if (o.model == "lifecycle" && o.format == 2) { std::fprintf(stderr, "spmcheck-impl: --format 2 is core only\n"); return 2; }
    if (o.model == "lifecycle" && o.agents > 4) { std::fprintf(stderr, "spmcheck-impl: lifecycle --agents must be in 1..4\n"); return 2; }
    if (o.model == "core" && o.updaters + o.lookups < 1) { std::fprintf(stderr, "spmcheck-impl: need at least one thread\n"); return 2; }
    std::FILE* f = std::fopen(o.output.c_str(), "w");
    if (!f) { std::fprintf(stderr, "spmcheck-impl: cannot write %s: %s\n", o.output.c_str(), std::strerror(errno)); return 2; }
    int rc = 0;
    if (o.model == "core") rc = impl::run_core(o);
    else if (o.model == "lifecycle") rc = impl::run_lifecycle(o);
    else { std::fprintf(stderr, "spmcheck-impl: --model must be core or lifecycle\n"); rc = 2; }
    if (rc == 0 && !spmcheck::trace::write(f, static_cast<std::size_t>(o.chunk))) { std::fprintf(stderr, "spmcheck-impl: write failed\n"); rc = 2; }
    std::fclose(f);
    if (rc == 0)
        std::fprintf(stderr, "spmcheck-impl: %llu events -> %s\n",
                     static_cast<unsigned long long>(spmcheck::trace::events()), o.output.c_str());
    return rc;
}
