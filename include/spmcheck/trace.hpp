// spmcheck/trace.hpp -- header-only C++17 emitter of spmcheck traces, format v1 and v2 (traces/FORMAT.md).
//
// Where each sequence number is taken (the rule the checker depends on):
//   * lock acquire: AFTER the lock is obtained; lock release: BEFORE it is released. No thread
//     that conflicts on the lock can log anything on it in between, so the sequence order of
//     lock events is the lock's own order.
//   * every other event: while the thread holds the lock that protects the state the event
//     observes or changes. The lock's happens-before edge then orders the fetch_add, so the
//     sequence order agrees with the order in which the state really changed.
//   * an event on a lock-free atomic (a flag store, an async counter) is emitted inside an
//     `atomic_section`: the atomic operation and the fetch_add happen under one tracing-only
//     mutex, so the logged order is the atomic's modification order.
// Records go to a per-thread buffer (no lock, no I/O on the hot path); `sink().write()` merges the
// buffers by sequence number after the run and writes the header line and one line per event
// (`write(f, K)`: unmerged, each buffer in runs of K, for `spmcheck check --reorder-window`).
//
// -DSPMCHECK_TRACE=0 makes every function an empty constexpr inline and every guard a plain
// std::unique_lock/std::shared_lock: the object file then has no reference to the sink.
#ifndef SPMCHECK_TRACE_HPP
#define SPMCHECK_TRACE_HPP

#ifndef SPMCHECK_TRACE
#define SPMCHECK_TRACE 1
#endif

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <shared_mutex>
#include <string>

#if SPMCHECK_TRACE
#include <algorithm>
#include <atomic>
#include <deque>
#include <memory>
#include <vector>
#endif

namespace spmcheck {
namespace trace {

enum class mode : std::uint8_t { shared, exclusive };

// A set of agents as a bit mask; `all_agents` is the SDK's empty set ("every GPU agent").
constexpr std::uint64_t all_agents = ~std::uint64_t{0};
// refcount_change on the `all` counter instead of one agent
constexpr int all_counter = -1;

using lock_id = std::uint32_t;

#if SPMCHECK_TRACE

enum class kind : std::uint8_t {
    // core model
    update_begin, update_end, lookup_begin, lookup_end, lock_acquire, lock_release,
    refcount_change, refcount_read, serializer_lookup, serializer_insert, serializer_enable,
    serializer_disable, flag_store,
    // lifecycle model
    context_register, add_callback, start_scan, start_begin, slot_publish, spm_enable,
    spm_set_enabled, marker_release, stop_begin, spm_clear_enabled, queue_sync, spm_disable,
    slot_clear, set_agents_check, set_agents_write, deactivate, profile_destroy, dispatch_write,
    dispatch_submit, completion_exit, completion_signal, dispatch_gate,
};

// 32 bytes: the buffer's cost is its memory traffic. The kind sits in the top byte of `tag`.
struct record {
    std::uint64_t tag;  // seq | kind << 56
    std::int64_t a[3];
    std::uint64_t seq() const { return tag & ((std::uint64_t{1} << 56) - 1); }
    trace::kind k() const { return static_cast<trace::kind>(tag >> 56); }
};

// Append-only, chunked: a push never copies earlier records (no vector regrowth on the hot path).
struct thread_buffer {
    static constexpr std::size_t chunk = 8192;
    std::string name;
    std::vector<std::unique_ptr<record[]>> chunks;
    std::size_t used = chunk;  // records in the last chunk
    void push(const record& r) {
        if (used == chunk) {
            chunks.emplace_back(new record[chunk]);
            used = 0;
        }
        chunks.back()[used++] = r;
    }
    std::size_t size() const { return chunks.empty() ? 0 : (chunks.size() - 1) * chunk + used; }
    const record& at(std::size_t i) const { return chunks[i / chunk][i % chunk]; }
};

namespace detail {
inline void put_set(std::string& out, std::uint64_t set) {
    if (set == all_agents) { out += "all"; return; }
    bool first = true;
    for (int i = 0; i < 64; ++i) {
        if (!(set >> i & 1u)) continue;
        if (!first) out += ',';
        out += std::to_string(i);
        first = false;
    }
}
inline void put(std::string& out, const char* key, std::int64_t v) {
    out += ' '; out += key; out += '='; out += std::to_string(v);
}
}  // namespace detail

class sink_t {
public:
    // The next sequence number. Relaxed is enough: the caller holds the lock that orders it
    // (or an atomic_section), and read-modify-writes of one atomic follow happens-before.
    std::uint64_t next() { return _seq.fetch_add(1, std::memory_order_relaxed) + 1; }
    std::uint64_t events() const { return _seq.load(std::memory_order_relaxed); }

    lock_id register_lock(std::string name) {
        std::lock_guard<std::mutex> g(_reg);
        _locks.push_back(std::move(name));
        return static_cast<lock_id>(_locks.size() - 1);
    }
    thread_buffer* attach(std::string name) {
        std::lock_guard<std::mutex> g(_reg);
        _buffers.push_back(std::make_unique<thread_buffer>());
        _buffers.back()->name = std::move(name);
        return _buffers.back().get();
    }
    void set_header(std::string line) { _header = std::move(line); }
    void set_holder_prefix(std::string p) { _holder_prefix = std::move(p); }
    std::mutex& atomic_mutex() { return _atomic; }

    // Merge every thread's records by sequence number and write the trace. Call after the
    // traced threads have been joined (their buffers are read without a lock), i.e. on a clean
    // shutdown: the header promises `end_marker=1` and the trace ends with `<seq> run_end`
    // (traces/FORMAT.md), so a log that lost its tail reads as a run that did not finish.
    //
    // `chunk` > 0: do not merge. Each thread's records are written in runs of `chunk`, in the order
    // a sink that flushes a thread's buffer whenever it fills would write them (by the number of a
    // run's last record; the partial last runs at shutdown, likewise), so a line is up to about
    // (threads - 1) * chunk lines from its place: check with `spmcheck check --reorder-window W`.
    bool write(std::FILE* f, std::size_t chunk = 0) {
        struct ref { std::uint64_t seq; const record* r; const std::string* who; };
        std::vector<ref> all;
        {
            std::lock_guard<std::mutex> g(_reg);
            std::size_t n = 0;
            for (auto& b : _buffers) n += b->size();
            all.reserve(n);
            struct run { std::uint64_t last; std::size_t from, to; };
            std::vector<run> runs;
            for (auto& b : _buffers) {
                const std::size_t from = all.size();
                for (std::size_t i = 0, m = b->size(); i < m; ++i) {
                    const record& r = b->at(i);
                    all.push_back({r.seq(), &r, &b->name});
                }
                for (std::size_t i = from; chunk && i < all.size(); i += chunk) {
                    const std::size_t to = std::min(all.size(), i + chunk);
                    runs.push_back({all[to - 1].seq, i, to});
                }
            }
            if (chunk) {
                std::sort(runs.begin(), runs.end(), [](const run& x, const run& y) { return x.last < y.last; });
                std::vector<ref> flushed;
                flushed.reserve(all.size());
                for (const auto& r : runs) flushed.insert(flushed.end(), all.begin() + r.from, all.begin() + r.to);
                all.swap(flushed);
            }
        }
        if (!chunk) std::sort(all.begin(), all.end(), [](const ref& x, const ref& y) { return x.seq < y.seq; });
        std::string out = _header;
        if (out.find(" end_marker=") == std::string::npos) out += " end_marker=1";
        out += '\n';
        std::uint64_t last = 0;
        for (auto& e : all) {
            line(out, e.seq, *e.who, *e.r);
            last = std::max(last, e.seq);
            if (out.size() > (1u << 20)) {
                if (std::fwrite(out.data(), 1, out.size(), f) != out.size()) return false;
                out.clear();
            }
        }
        out += std::to_string(last + 1);
        out += " run_end\n";
        return std::fwrite(out.data(), 1, out.size(), f) == out.size() && std::fflush(f) == 0;
    }

private:
    void line(std::string& out, std::uint64_t seq, const std::string& who, const record& r) const {
        using detail::put;
        out += std::to_string(seq); out += ' '; out += who; out += ' ';
        const std::int64_t* a = r.a;
        auto kname = [&](const char* s) { out += s; };
        auto lock = [&](const char* s) {
            kname(s);
            out += " lock="; out += _locks[static_cast<std::size_t>(a[0])];
            out += a[1] ? " mode=exclusive" : " mode=shared";
        };
        switch (r.k()) {
        case kind::update_begin:
            kname("update_begin agents="); detail::put_set(out, static_cast<std::uint64_t>(a[0]));
            put(out, "enable", a[1]);
            if (a[2] >= 0) { out += " holder="; out += _holder_prefix; out += std::to_string(a[2]); }
            break;
        case kind::update_end: kname("update_end"); break;
        case kind::lookup_begin: kname("lookup_begin"); put(out, "agent", a[0]); break;
        case kind::lookup_end: kname("lookup_end"); put(out, "agent", a[0]); break;
        case kind::lock_acquire: lock("lock_acquire"); break;
        case kind::lock_release: lock("lock_release"); break;
        case kind::refcount_change:
            kname("refcount_change agent=");
            if (a[0] == all_counter) out += "all"; else out += std::to_string(a[0]);
            put(out, "old", a[1]); put(out, "new", a[2]); break;
        case kind::refcount_read: kname("refcount_read"); put(out, "agent", a[0]); put(out, "count", a[1]); break;
        case kind::serializer_lookup:
            kname("serializer_lookup"); put(out, "agent", a[0]); put(out, "found", a[1]); break;
        case kind::serializer_insert:
            kname("serializer_insert"); put(out, "agent", a[0]); put(out, "created", a[1]); break;
        case kind::serializer_enable: kname("serializer_enable"); put(out, "agent", a[0]); break;
        case kind::serializer_disable: kname("serializer_disable"); put(out, "agent", a[0]); break;
        case kind::flag_store: kname("flag_store"); put(out, "value", a[0]); break;
        case kind::context_register: kname("context_register"); put(out, "ctx", a[0]); break;
        case kind::add_callback: kname("add_callback"); put(out, "id", a[0]); break;
        case kind::start_scan: kname("start_scan"); put(out, "ctx", a[0]); put(out, "result", a[1]); break;
        case kind::start_begin: kname("start_begin"); put(out, "ctx", a[0]); put(out, "result", a[1]); break;
        case kind::slot_publish: kname("slot_publish"); put(out, "ctx", a[0]); break;
        case kind::spm_enable: kname("spm_enable"); put(out, "ctx", a[0]); put(out, "agents_mask", a[1]); break;
        case kind::spm_set_enabled: kname("spm_set_enabled"); put(out, "ctx", a[0]); break;
        case kind::marker_release: kname("marker_release"); put(out, "ctx", a[0]); break;
        case kind::stop_begin: kname("stop_begin"); put(out, "ctx", a[0]); put(out, "result", a[1]); break;
        case kind::spm_clear_enabled:
            kname("spm_clear_enabled"); put(out, "ctx", a[0]); put(out, "was", a[1]); break;
        case kind::queue_sync: kname("queue_sync"); put(out, "ctx", a[0]); put(out, "drained", a[1]); break;
        case kind::spm_disable: kname("spm_disable"); put(out, "ctx", a[0]); put(out, "agents_mask", a[1]); break;
        case kind::slot_clear: kname("slot_clear"); put(out, "ctx", a[0]); break;
        case kind::set_agents_check:
            kname("set_agents_check"); put(out, "ctx", a[0]); out += " agents=";
            detail::put_set(out, static_cast<std::uint64_t>(a[1])); put(out, "result", a[2]); break;
        case kind::set_agents_write: kname("set_agents_write"); put(out, "ctx", a[0]); break;
        case kind::deactivate: kname("deactivate"); put(out, "ctx", a[0]); put(out, "result", a[1]); break;
        case kind::profile_destroy: kname("profile_destroy"); put(out, "ctx", a[0]); break;
        case kind::dispatch_write:
            kname("dispatch_write"); put(out, "agent", a[0] & 0xff); put(out, "id", a[1]);
            put(out, "batch", a[2] & 1); put(out, "instrumented", static_cast<std::int64_t>(static_cast<std::uint64_t>(a[2]) >> 2));
            put(out, "serialize", (a[2] >> 1) & 1);
            put(out, "spm", static_cast<std::int64_t>(static_cast<std::uint64_t>(a[0]) >> 8));
            break;
        case kind::dispatch_gate:
            kname("dispatch_gate"); put(out, "agent", a[0]); put(out, "id", a[1]); put(out, "batch", a[2]);
            break;
        case kind::dispatch_submit: kname("dispatch_submit"); put(out, "id", a[0]); put(out, "serialized", a[1]); break;
        case kind::completion_exit:
            kname("completion_exit"); put(out, "id", a[0]); put(out, "prescan", a[1]); put(out, "delivered", a[2]);
            break;
        case kind::completion_signal: kname("completion_signal"); put(out, "id", a[0]); break;
        }
        out += '\n';
    }

    std::atomic<std::uint64_t> _seq{0};
    std::mutex _reg;
    std::mutex _atomic;
    std::deque<std::string> _locks;
    std::vector<std::unique_ptr<thread_buffer>> _buffers;
    std::string _header = "spmcheck-trace v1";
    std::string _holder_prefix = "c";  // holder=<prefix><id>
};

inline sink_t& sink() {
    static sink_t s;
    return s;
}

namespace detail {
inline thread_buffer*& current() {
    thread_local thread_buffer* buf = nullptr;
    return buf;
}
inline bool& muted() {
    thread_local bool m = false;
    return m;
}
inline std::int64_t& holder() {  // -1: the thread acts for itself (no holder= key)
    thread_local std::int64_t h = -1;
    return h;
}
inline void emit_at(std::uint64_t seq, kind k, std::int64_t a0 = 0, std::int64_t a1 = 0, std::int64_t a2 = 0) {
    thread_buffer* b = current();
    if (!b) b = current() = sink().attach("?");  // a thread that was never named is TRC010
    b->push(record{seq | static_cast<std::uint64_t>(k) << 56, {a0, a1, a2}});
}
inline void emit(kind k, std::int64_t a0 = 0, std::int64_t a1 = 0, std::int64_t a2 = 0) {
    if (muted()) return;
    emit_at(sink().next(), k, a0, a1, a2);
}
// dispatch_write's flags word: batch, serialize, then the instrumented-contexts mask
inline std::int64_t write_flags(bool batch, std::uint64_t instrumented, bool serialize) {
    return static_cast<std::int64_t>(std::uint64_t(batch) | std::uint64_t(serialize) << 1 | instrumented << 2);
}
// dispatch_write's agent word: the agent in the low byte, the SPMPacket contexts above it
inline std::int64_t agent_spm(int agent, std::uint64_t spm) {
    return static_cast<std::int64_t>(std::uint64_t(static_cast<unsigned>(agent) & 0xffu) | spm << 8);
}
}  // namespace detail

// Name the calling thread as it appears in the trace (format v1: u0, l0, t0, d0, h0).
inline void set_thread_name(const std::string& name) { detail::current() = sink().attach(name); }
inline lock_id register_lock(const std::string& name) { return sink().register_lock(name); }
inline std::uint64_t events() { return sink().events(); }

// Format v2 core header: no sizes (threads, agents are discovered by the checker as they appear).
inline void core_header_v2(const std::string& variant, const std::string& meta = "") {
    sink().set_header("spmcheck-trace v2 model=core variant=" + variant + meta);
}

// Header lines (format v1). `meta` is appended verbatim: " key=value key=value".
inline void core_header(const std::string& variant, int agents, int updaters, int lookups,
                        const std::string& meta = "") {
    sink().set_header("spmcheck-trace v1 variant=" + variant + " agents=" + std::to_string(agents) +
                      " updaters=" + std::to_string(updaters) + " lookups=" + std::to_string(lookups) + meta);
}
inline void lifecycle_header(const std::string& variant, int agents, int contexts, int tools, int dispatches,
                             int max_ids, bool timeouts, bool deactivate, bool destroy,
                             const std::string& meta = "") {
    sink().set_header("spmcheck-trace v1 model=lifecycle variant=" + variant + " agents=" +
                      std::to_string(agents) + " contexts=" + std::to_string(contexts) + " tools=" +
                      std::to_string(tools) + " dispatches=" + std::to_string(dispatches) + " max_ids=" +
                      std::to_string(max_ids) + " timeouts=" + std::to_string(int(timeouts)) +
                      " deactivate=" + std::to_string(int(deactivate)) + " destroy=" +
                      std::to_string(int(destroy)) + meta);
}
inline bool write(std::FILE* f, std::size_t chunk = 0) { return sink().write(f, chunk); }

// ---- core events ----
inline void update_begin(std::uint64_t agents, bool enable) {
    detail::emit(kind::update_begin, static_cast<std::int64_t>(agents), enable, detail::holder());
}
// The holder (context) on whose behalf this thread's next update_serialization() calls run:
// references belong to contexts, and one tool thread may start several before stopping any.
// Written as `holder=<prefix><id>` on update_begin; -1 (the default) writes no key.
inline void set_holder(std::int64_t id) { detail::holder() = id; }
inline void holder_prefix(const std::string& p) { sink().set_holder_prefix(p); }
inline void update_end() { detail::emit(kind::update_end); }
inline void lookup_begin(int agent) { detail::emit(kind::lookup_begin, agent); }
inline void lookup_end(int agent) { detail::emit(kind::lookup_end, agent); }
inline void lock_acquire(lock_id lock, mode m) { detail::emit(kind::lock_acquire, lock, m == mode::exclusive); }
inline void lock_release(lock_id lock, mode m) { detail::emit(kind::lock_release, lock, m == mode::exclusive); }
inline void refcount_change(int agent_or_all, std::int64_t old_v, std::int64_t new_v) {
    detail::emit(kind::refcount_change, agent_or_all, old_v, new_v);
}
inline void refcount_read(int agent, std::int64_t count) { detail::emit(kind::refcount_read, agent, count); }
inline void serializer_lookup(int agent, bool found) { detail::emit(kind::serializer_lookup, agent, found); }
inline void serializer_insert(int agent, bool created) { detail::emit(kind::serializer_insert, agent, created); }
inline void serializer_enable(int agent) { detail::emit(kind::serializer_enable, agent); }
inline void serializer_disable(int agent) { detail::emit(kind::serializer_disable, agent); }
inline void flag_store(bool value) { detail::emit(kind::flag_store, value); }
// ---- lifecycle events ----
inline void context_register(int ctx) { detail::emit(kind::context_register, ctx); }
inline void add_callback(std::int64_t id) { detail::emit(kind::add_callback, id); }
inline void start_scan(int ctx, int result) { detail::emit(kind::start_scan, ctx, result); }
inline void start_begin(int ctx, int result) { detail::emit(kind::start_begin, ctx, result); }
inline void slot_publish(int ctx) { detail::emit(kind::slot_publish, ctx); }
inline void spm_enable(int ctx, std::uint64_t agents_mask) {
    detail::emit(kind::spm_enable, ctx, static_cast<std::int64_t>(agents_mask));
}
inline void spm_set_enabled(int ctx) { detail::emit(kind::spm_set_enabled, ctx); }
inline void marker_release(int ctx) { detail::emit(kind::marker_release, ctx); }
inline void stop_begin(int ctx, int result) { detail::emit(kind::stop_begin, ctx, result); }
inline void spm_clear_enabled(int ctx, bool was) { detail::emit(kind::spm_clear_enabled, ctx, was); }
inline void queue_sync(int ctx, bool drained) { detail::emit(kind::queue_sync, ctx, drained); }
inline void spm_disable(int ctx, std::uint64_t agents_mask) {
    detail::emit(kind::spm_disable, ctx, static_cast<std::int64_t>(agents_mask));
}
inline void slot_clear(int ctx) { detail::emit(kind::slot_clear, ctx); }
inline void set_agents_check(int ctx, std::uint64_t agents, int result) {
    detail::emit(kind::set_agents_check, ctx, static_cast<std::int64_t>(agents), result);
}
inline void set_agents_write(int ctx) { detail::emit(kind::set_agents_write, ctx); }
inline void deactivate(int ctx, int result) { detail::emit(kind::deactivate, ctx, result); }
inline void profile_destroy(int ctx) { detail::emit(kind::profile_destroy, ctx); }
// spm: the contexts whose pre_kernel_call built an SPMPacket (the rest of `instrumented` got the
// EmptyAQLPacket fallback); packed above the agent (agents < 256, contexts < 56)
// WriteInterceptor's entry: the batching decision (spm::is_active_on_agent / is_any_active), taken
// with the slot loads it reads (inside atomic_section), before the enter hook's snapshot
inline void dispatch_gate(int agent, int id, bool batch) { detail::emit(kind::dispatch_gate, agent, id, batch); }
inline void dispatch_write(int agent, int id, bool batch, std::uint64_t instrumented, bool serialize,
                           std::uint64_t spm) {
    detail::emit(kind::dispatch_write, detail::agent_spm(agent, spm), id, detail::write_flags(batch, instrumented, serialize));
}
inline void dispatch_submit(int id, bool serialized) { detail::emit(kind::dispatch_submit, id, serialized); }
inline void completion_exit(int id, bool prescan, int delivered) {
    detail::emit(kind::completion_exit, id, prescan, delivered);
}
inline void completion_signal(int id) { detail::emit(kind::completion_signal, id); }

// A sequence number taken now for an event whose observed values are known only later (e.g. a
// hook that snapshots the active contexts, then works on them): take it at the instant the
// event's state is read, pass it to the event function when the values are known. Every
// deferred number must be emitted, or the trace has a gap (TRC013).
class deferred {
public:
    deferred() : seq(sink().next()) {}
    std::uint64_t seq;
};
inline void dispatch_write(const deferred& d, int agent, int id, bool batch, std::uint64_t instrumented,
                           bool serialize, std::uint64_t spm) {
    detail::emit_at(d.seq, kind::dispatch_write, detail::agent_spm(agent, spm), id,
                    detail::write_flags(batch, instrumented, serialize));
}
inline void completion_exit(const deferred& d, int id, bool prescan, int delivered) {
    detail::emit_at(d.seq, kind::completion_exit, id, prescan, delivered);
}

// Scope in which this thread's events are (not) emitted: for code that a caller traces at a
// coarser grain (e.g. a lifecycle step that runs the whole update_serialization()).
class mute_scope {
public:
    explicit mute_scope(bool on = true) : _saved(detail::muted()) { detail::muted() = on; }
    mute_scope(const mute_scope&) = delete;
    mute_scope& operator=(const mute_scope&) = delete;
    ~mute_scope() { detail::muted() = _saved; }
private:
    bool _saved;
};

// Scope for an event on a lock-free atomic: do the atomic operation and emit its event inside.
class atomic_section {
public:
    atomic_section() : _g(sink().atomic_mutex()) {}
private:
    std::lock_guard<std::mutex> _g;
};

#else  // SPMCHECK_TRACE == 0: every call is an empty constexpr function

inline void set_thread_name(const std::string&) {}
inline lock_id register_lock(const std::string&) { return 0; }
constexpr std::uint64_t events() { return 0; }
inline void core_header(const std::string&, int, int, int, const std::string& = "") {}
inline void core_header_v2(const std::string&, const std::string& = "") {}
inline void lifecycle_header(const std::string&, int, int, int, int, int, bool, bool, bool,
                             const std::string& = "") {}
inline bool write(std::FILE*, std::size_t = 0) { return true; }
constexpr void update_begin(std::uint64_t, bool) {}
constexpr void set_holder(std::int64_t) {}
inline void holder_prefix(const std::string&) {}
constexpr void update_end() {}
constexpr void lookup_begin(int) {}
constexpr void lookup_end(int) {}
constexpr void lock_acquire(lock_id, mode) {}
constexpr void lock_release(lock_id, mode) {}
constexpr void refcount_change(int, std::int64_t, std::int64_t) {}
constexpr void refcount_read(int, std::int64_t) {}
constexpr void serializer_lookup(int, bool) {}
constexpr void serializer_insert(int, bool) {}
constexpr void serializer_enable(int) {}
constexpr void serializer_disable(int) {}
constexpr void flag_store(bool) {}
constexpr void context_register(int) {}
constexpr void add_callback(std::int64_t) {}
constexpr void start_scan(int, int) {}
constexpr void start_begin(int, int) {}
constexpr void slot_publish(int) {}
constexpr void spm_enable(int, std::uint64_t) {}
constexpr void spm_set_enabled(int) {}
constexpr void marker_release(int) {}
constexpr void stop_begin(int, int) {}
constexpr void spm_clear_enabled(int, bool) {}
constexpr void queue_sync(int, bool) {}
constexpr void spm_disable(int, std::uint64_t) {}
constexpr void slot_clear(int) {}
constexpr void set_agents_check(int, std::uint64_t, int) {}
constexpr void set_agents_write(int) {}
constexpr void deactivate(int, int) {}
constexpr void profile_destroy(int) {}
constexpr void dispatch_gate(int, int, bool) {}
constexpr void dispatch_write(int, int, bool, std::uint64_t, bool, std::uint64_t) {}
constexpr void dispatch_submit(int, bool) {}
constexpr void completion_exit(int, bool, int) {}
constexpr void completion_signal(int) {}

class atomic_section {
public:
    constexpr atomic_section() = default;
};
class mute_scope {
public:
    constexpr explicit mute_scope(bool = true) {}
};
struct deferred {};
constexpr void dispatch_write(const deferred&, int, int, bool, std::uint64_t, bool, std::uint64_t) {}
constexpr void completion_exit(const deferred&, int, bool, int) {}

#endif  // SPMCHECK_TRACE

// ---- traced lock guards (both builds; the disabled build only locks) ----
// exclusive_lock<std::mutex> / exclusive_lock<std::shared_mutex>: seq after lock(), before unlock().
template <class Mutex>
class exclusive_lock {
public:
    exclusive_lock(Mutex& m, lock_id id) : _m(&m), _id(id) {
        _m->lock();
        lock_acquire(_id, mode::exclusive);
    }
    exclusive_lock(const exclusive_lock&) = delete;
    exclusive_lock& operator=(const exclusive_lock&) = delete;
    ~exclusive_lock() { unlock(); }
    void unlock() {
        if (!_m) return;
        lock_release(_id, mode::exclusive);
        _m->unlock();
        _m = nullptr;
    }
private:
    Mutex* _m;
    lock_id _id;
};

template <class SharedMutex>
class shared_lock {
public:
    shared_lock(SharedMutex& m, lock_id id) : _m(&m), _id(id) {
        _m->lock_shared();
        lock_acquire(_id, mode::shared);
    }
    shared_lock(const shared_lock&) = delete;
    shared_lock& operator=(const shared_lock&) = delete;
    ~shared_lock() { unlock(); }
    void unlock() {
        if (!_m) return;
        lock_release(_id, mode::shared);
        _m->unlock_shared();
        _m = nullptr;
    }
private:
    SharedMutex* _m;
    lock_id _id;
};

}  // namespace trace
}  // namespace spmcheck

#endif  // SPMCHECK_TRACE_HPP
