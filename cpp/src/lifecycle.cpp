// The SPM context lifecycle as the SDK code has it (protocol digest §2.4-§2.11): context/context.cpp
// start_context (conflict scan, slot reservation, `stopping` marker, CAS publish) and the
// four-phase stop_context; spm/core.cpp start/stop_context with the queue_controller_sync()
// drain and set_dispatch_agents; the WriteInterceptor gate, the SPM enter hook over the ACTIVE
// contexts with collects_on and pre_kernel_call; the AsyncSignalHandler exit hook over the
// REGISTERED contexts and post_kernel_call; async_started / async_complete. The QueueController
// is the core port (queue_controller.cpp), traced here at the lifecycle's grain.
//
// Threads: t<i> tools, d0 dispatch (WriteInterceptor), h0 completion (AsyncSignalHandler).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <shared_mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "options.hpp"
#include "pause.hpp"
#include "queue_controller.hpp"
#include "thread_names.hpp"

namespace impl {

namespace {

struct lc_variant {
    const char* name;
    bool slot_cleared_first = false;    // stop CASes the slot to null before spm::stop_context
    bool exit_over_active = false;      // v1 exit hook over ACTIVE contexts
    bool positive_tags = false;         // hook tags 1..4 (ROCm@9a49575c) instead of -1001..-1004
    bool scoped = true;                 // collects_on in the enter hook; enable/disable(agents)
    bool scan_locked = true;            // conflict scan under the contexts mutex
    bool start_marker = true;           // start inserts the `stopping` marker before unlocking
    bool stop_disable_guarded = true;   // spm::stop_context releases only if `enabled` was set
    bool set_agents_waits = true;       // set_dispatch_agents waits for the markers
    bool per_agent_gate = true;         // is_active_on_agent (else is_any_active)
};

lc_variant make(const char* n) { lc_variant v; v.name = n; return v; }

bool lc_variant_named(const std::string& name, lc_variant& out) {
    std::vector<lc_variant> all;
    all.push_back(make("final"));
    { auto v = make("pr-758072b"); v.per_agent_gate = false; v.positive_tags = true; v.start_marker = false; all.push_back(v); }
    { auto v = make("slot-cleared-first"); v.slot_cleared_first = true; all.push_back(v); }
    { auto v = make("exit-over-active"); v.exit_over_active = true; v.slot_cleared_first = true; all.push_back(v); }
    { auto v = make("positive-tags"); v.positive_tags = true; all.push_back(v); }
    { auto v = make("unscoped-hooks"); v.scoped = false; all.push_back(v); }
    { auto v = make("conflict-scan-unlocked"); v.scan_locked = false; all.push_back(v); }
    { auto v = make("publish-after-unlock"); v.start_marker = false; all.push_back(v); }
    { auto v = make("unconditional-stop-disable"); v.stop_disable_guarded = false; v.start_marker = false; all.push_back(v); }
    { auto v = make("set-agents-race"); v.set_agents_waits = false; all.push_back(v); }
    { auto v = make("process-wide-batching"); v.per_agent_gate = false; all.push_back(v); }
    for (auto& v : all)
        if (name == v.name) { out = v; return true; }
    return false;
}

constexpr int R_OK = 0, R_ALREADY = 1, R_CONFLICT = 2;  // start status (trace `result`)
constexpr int S_FOUND = 0, S_NOT_FOUND = 1;             // stop
constexpr int A_OK = 0, A_LOCKED = 1;                   // set_dispatch_agents

enum class packet_kind { empty, spm };  // EmptyAQLPacket fallback or an SPMPacket
struct packet { packet_kind kind; };

// context::spm_dispatch_counter_collection_service with its one callback
struct spm_service {
    agent_handle_set_t agents;  // empty = every GPU agent; no lock of its own (set_dispatch_agents)
    mutable std::shared_mutex enabled_mutex;  // Synchronized<bool> enabled
    bool enabled = false;
    std::shared_mutex map_mutex;  // Synchronized<unordered_map<AQLPacket*, config>> packet_return_map
    std::unordered_map<const packet*, int> packet_return_map;

    bool collects_on(const agent_id& a) const { return agents.empty() || agents.count(a) != 0; }
    bool intersects(const spm_service& o) const {
        if (agents.empty() || o.agents.empty()) return true;
        for (const auto& a : agents)
            if (o.agents.count(a)) return true;
        return false;
    }
};

struct context {
    int id = 0;
    spm_service spm;
};

// hsa::Queue reduced to `_active_kernels` (an HSA signal used as a counter) and Queue::sync()
struct queue {
    std::mutex m;
    std::condition_variable cv;
    std::int64_t active_kernels = 0;
};

// one WriteInterceptor session (one dispatch)
struct session {
    int id = 0;
    int agent = 0;
    std::vector<std::pair<std::unique_ptr<packet>, std::int64_t>> inst_pkt;  // (packet, producer tag)
};

class lifecycle {
public:
    lifecycle(const options& o, lc_variant v)
        : _o(o), _v(v), _qc(core_variant{"final", true, true, true, false}, o.agents),
          _slots(static_cast<std::size_t>(o.contexts)), _queues(static_cast<std::size_t>(o.agents)) {
        for (int c = 0; c < o.contexts; ++c) {
            _contexts.emplace_back(std::make_unique<context>());
            _contexts.back()->id = c;
        }
        for (auto& s : _slots) s.store(nullptr);
        std::atomic_store(&_registered_snapshot, std::make_shared<const std::vector<const context*>>());
        _spm_tag = v.positive_tags ? 4 : -1004;
    }

    // ---- registry --------------------------------------------------------------------------------
    void register_context(int c) {
        std::lock_guard<std::mutex> g(_registry_mutex);
        if (_registered[static_cast<std::size_t>(c)]) return;
        _registered[static_cast<std::size_t>(c)] = true;
        auto snap = std::make_shared<std::vector<const context*>>();
        for (int i = 0; i < _o.contexts; ++i)
            if (_registered[static_cast<std::size_t>(i)]) snap->push_back(_contexts[static_cast<std::size_t>(i)].get());
        tr::atomic_section a;  // the exit hook loads the snapshot lock-free
        std::atomic_store(&_registered_snapshot, std::shared_ptr<const std::vector<const context*>>(snap));
        tr::context_register(c);
    }
    bool registered(int c) {
        std::lock_guard<std::mutex> g(_registry_mutex);
        return _registered[static_cast<std::size_t>(c)];
    }
    // QueueController::add_callback: `static atomic<ClientID> client_id{1}`, under _callback_cache W
    void add_callback() {
        std::lock_guard<std::mutex> g(_callback_cache);
        if (_ids >= _o.max_ids) return;  // the trace header's id budget
        tr::atomic_section a;  // the dispatch thread reads the newest id lock-free
        const auto id = _client_id.fetch_add(1);
        _ids = static_cast<int>(id);
        _newest_id.store(id);
        tr::add_callback(id);
    }

    // ---- context::start_context + spm::start_context -----------------------------------------------
    void start(int c) {
        context* ctx = _contexts[static_cast<std::size_t>(c)].get();
        int scanned = R_OK;
        if (!_v.scan_locked) {  // baseline: conflict scan over get_active_contexts() before the mutex
            tr::atomic_section a;
            scanned = scan(ctx);
            tr::start_scan(c, scanned);
        }
        if (!_v.scan_locked) gap_pause();  // the scan's result used under the mutex taken after it
        int result = R_OK;
        std::size_t idx = 0;
        {
            std::unique_lock<std::mutex> lk(_contexts_mutex);
            // wait_for_stopping_contexts(); without the marker, one slot per context (model gap [INF])
            _cv.wait(lk, [&] { return _stopping.empty() && (_v.start_marker || !_reserved.count(c)); });
            tr::atomic_section a;  // the scan loads published slots
            result = _v.scan_locked ? scan(ctx) : scanned;
            if (result == R_OK) {
                idx = reserve_slot();
                _reserved.insert(c);
                _reserved_idx[c] = idx;
                _num_active.fetch_add(1);
                if (_v.start_marker) _stopping.insert(c);
            }
            tr::start_begin(c, result);
        }
        pause_point();  // the unlock -> CAS publish window
        gap_pause();    // (a gap between two scopes of one call: --gap-us widens it in every variant)
        if (result != R_OK) return;
        {
            tr::atomic_section a;
            const context* expected = nullptr;
            _slots[idx].compare_exchange_strong(expected, ctx);  // reserved under the mutex: succeeds
            tr::slot_publish(c);
        }
        {
            std::lock_guard<std::mutex> lk(_contexts_mutex);
            _reserved.erase(c);
            _reserved_idx.erase(c);
        }
        _cv.notify_all();
        pause_point();
        // spm::start_context: enable_serialization(agents) then W(enabled) = true
        const auto mask = agents_mask(ctx);
        {
            tr::mute_scope quiet;
            no_pause calm;
            _qc.enable_serialization(scope_of(ctx), [&] {
                tr::mute_scope loud(false);
                tr::spm_enable(c, mask);
            });
        }
        pause_point();
        {
            std::unique_lock<std::shared_mutex> w(ctx->spm.enabled_mutex);
            if (!ctx->spm.enabled) ctx->spm.enabled = true;
            tr::spm_set_enabled(c);
        }
        pause_point();
        if (_v.start_marker) release_marker(c);
    }

    void release_marker(int c) {
        {
            std::lock_guard<std::mutex> lk(_contexts_mutex);
            _stopping.erase(c);
            tr::marker_release(c);
        }
        _cv.notify_all();
        pause_point();
    }

    // ---- context::stop_context (four phases) + spm::stop_context ------------------------------------
    void stop(int c) {
        context* ctx = _contexts[static_cast<std::size_t>(c)].get();
        std::unique_lock<std::mutex> lk(_contexts_mutex);
        _cv.wait(lk, [&] { return _stopping.empty(); });
        std::size_t idx = 0;
        bool found = false;
        {
            tr::atomic_section a;
            for (std::size_t i = 0; i < _slots.size(); ++i)
                if (_slots[i].load() == ctx) { idx = i; found = true; break; }
            if (found) {
                _stopping.insert(c);
                if (_v.slot_cleared_first) {  // pre-fix: CAS the slot to null first
                    const context* expected = ctx;
                    _slots[idx].compare_exchange_strong(expected, nullptr);
                    _num_active.fetch_sub(1);
                }
            }
            tr::stop_begin(c, found ? S_FOUND : S_NOT_FOUND);
        }
        if (!found) return;
        // pre-fix stop held the contexts mutex across the service stop
        if (!_v.slot_cleared_first) lk.unlock();
        pause_point();
        gap_pause();  // phase 1's mutex released, the service stop not yet begun
        bool was = false;
        {
            std::unique_lock<std::shared_mutex> w(ctx->spm.enabled_mutex);
            was = ctx->spm.enabled;
            ctx->spm.enabled = false;
            tr::spm_clear_enabled(c, was);
        }
        pause_point();
        if (was || !_v.stop_disable_guarded) {
            queue_controller_sync(c);  // result ignored by spm::stop_context
            pause_point();
            const auto mask = agents_mask(ctx);
            tr::mute_scope quiet;
            no_pause calm;
            _qc.disable_serialization(scope_of(ctx), [&] {
                tr::mute_scope loud(false);
                tr::spm_disable(c, mask);
            });
        }
        pause_point();
        if (_v.slot_cleared_first) {
            lk.unlock();
        } else {
            std::lock_guard<std::mutex> g(_contexts_mutex);
            tr::atomic_section a;
            const context* expected = ctx;
            _slots[idx].compare_exchange_strong(expected, nullptr);
            _num_active.fetch_sub(1);
            tr::slot_clear(c);
        }
        pause_point();
        release_marker(c);  // scope guard
    }

    // queue_controller_sync(): every queue's Queue::sync() in turn, a bounded wait each
    void queue_controller_sync(int c) {
        bool drained = true;
        for (auto& q : _queues) {
            std::unique_lock<std::mutex> l(q.m);
            auto idle = [&] { return q.active_kernels == 0; };
            if (_o.timeouts)
                drained = q.cv.wait_for(l, std::chrono::microseconds(_o.sync_timeout_us), idle) && drained;
            else
                q.cv.wait(l, idle);
        }
        tr::atomic_section a;
        tr::queue_sync(c, drained);
    }

    // ---- spm::set_dispatch_agents ---------------------------------------------------------------
    void set_agents(int c, std::uint64_t members) {
        context* ctx = _contexts[static_cast<std::size_t>(c)].get();
        std::unique_lock<std::mutex> lk(_contexts_mutex);
        if (_v.set_agents_waits) _cv.wait(lk, [&] { return _stopping.empty(); });
        bool active = false;
        {
            tr::atomic_section a;
            for (auto& s : _slots) active = active || s.load() == ctx;
            tr::set_agents_check(c, members == 0 ? tr::all_agents : members, active ? A_LOCKED : A_OK);
        }
        if (active) return;  // CONFIGURATION_LOCKED
        agent_handle_set_t sel;
        for (int a = 0; a < _o.agents; ++a)
            if (members >> a & 1u) sel.insert(_qc.agents()[static_cast<std::size_t>(a)]);
        ctx->spm.agents = sel;
        tr::set_agents_write(c);
    }

    // ---- WriteInterceptor (d0) -------------------------------------------------------------------
    void dispatch(int k, int a) {
        const agent_id agent = _qc.agents()[static_cast<std::size_t>(a)];
        auto s = std::make_unique<session>();
        s->id = k;
        s->agent = a;
        // WriteInterceptor's entry: no_real_consumers / should_batch read the SPM gate once per
        // write (is_active_on_agent, commit 4bbc5a8; is_any_active in 758072b), before any packet
        // is processed. Its slot loads and the event share one atomic_section, so the event sits
        // in the slots' modification order; a start's publish or a stop's clear can still fall
        // between this and the enter hook's snapshot below (cpp/DIVERGENCES.md L1).
        bool batch = true;
        {
            tr::atomic_section sec;
            bool active_here = false;
            for (auto& slot : _slots) {
                const context* ctx = slot.load();
                if (ctx && (!_v.per_agent_gate || ctx->spm.collects_on(agent))) active_here = true;
            }
            batch = !active_here;
            tr::dispatch_gate(a, k, batch);
        }
        pause_point();
        // registry write_interceptor loop: the newest registry client instruments the dispatch
        // with its own id as tag (the trace's `rt` = ids handed out)
        const auto newest = _newest_id.load();
        if (newest > 0) s->inst_pkt.emplace_back(std::make_unique<packet>(packet{packet_kind::empty}), newest);
        // SPM enter hook over get_active_contexts(); the event's seq is taken at the snapshot
        std::vector<const context*> snapshot;
        std::unique_ptr<tr::deferred> seq;
        {
            tr::atomic_section sec;
            seq = std::make_unique<tr::deferred>();
            for (auto& slot : _slots)
                if (const context* ctx = slot.load()) snapshot.push_back(ctx);
        }
        std::uint64_t instrumented = 0, spm = 0;
        bool is_serialized = false;
        for (const context* cctx : snapshot) {
            auto* ctx = const_cast<context*>(cctx);
            if (_v.scoped && !ctx->spm.collects_on(agent)) continue;
            // pre_kernel_call: enabled read under R, released; then the packet_return_map insert
            bool en = false;
            {
                std::shared_lock<std::shared_mutex> r(ctx->spm.enabled_mutex);
                en = ctx->spm.enabled;
            }
            auto p = std::make_unique<packet>(packet{en ? packet_kind::spm : packet_kind::empty});
            {
                std::unique_lock<std::shared_mutex> w(ctx->spm.map_mutex);
                ctx->spm.packet_return_map.emplace(p.get(), ctx->id);
            }
            s->inst_pkt.emplace_back(std::move(p), _spm_tag);
            instrumented |= std::uint64_t{1} << ctx->id;
            if (en) spm |= std::uint64_t{1} << ctx->id;
            is_serialized = true;  // every pre_kernel_call path returns serialize=true
        }
        tr::dispatch_write(*seq, a, k, batch, instrumented, is_serialized, spm);
        pause_point();
        // serializer(queue).rlock(kernel_dispatch), then async_started(). The event is taken under
        // the serializer's read lock with the counter increment: the model fuses the two, and
        // between them the SDK runs only straight-line packet building.
        queue& q = _queues[static_cast<std::size_t>(a)];
        auto submit = [&](bool serialized) {
            std::lock_guard<std::mutex> l(q.m);
            tr::atomic_section sec;
            tr::mute_scope loud(false);
            ++q.active_kernels;  // async_started()
            tr::dispatch_submit(k, serialized);
            return 0;
        };
        if (is_serialized) {
            no_pause calm;
            tr::mute_scope quiet;
            serializer_entry* ser = &_qc.serializer(agent);
            ser->rlock([&](const profiler_serializer& p) { return submit(p.enabled); });  // kernel_dispatch
        } else {
            submit(false);
        }
        {
            std::lock_guard<std::mutex> l(_completion_mutex);
            _completions.push_back(std::move(s));
        }
        _completion_cv.notify_one();
    }

    // ---- AsyncSignalHandler (h0) -------------------------------------------------------------------
    void complete_all(int total) {
        auto& rng = pause_config().rng;
        for (int done = 0; done < total; ++done) {
            std::unique_ptr<session> s;
            {
                std::unique_lock<std::mutex> l(_completion_mutex);
                _completion_cv.wait(l, [&] { return !_completions.empty(); });
                // completion signals of different queues arrive in any order
                auto i = std::uniform_int_distribution<std::size_t>(0, _completions.size() - 1)(rng);
                s = std::move(_completions[i]);
                _completions.erase(_completions.begin() + static_cast<std::ptrdiff_t>(i));
            }
            complete(*s);
            pause_point();
        }
    }

    void complete(session& s) {
        // SPM exit hook: pre-scan for the SPM tag, then every REGISTERED (v1: ACTIVE) SPM context
        bool prescan = false;
        for (auto& e : s.inst_pkt) prescan = prescan || e.second == _spm_tag;
        std::vector<const context*> route;
        std::unique_ptr<tr::deferred> seq;
        {
            tr::atomic_section sec;
            seq = std::make_unique<tr::deferred>();
            if (prescan) {
                if (_v.exit_over_active) {
                    for (auto& slot : _slots)
                        if (const context* ctx = slot.load()) route.push_back(ctx);
                } else {
                    auto snap = std::atomic_load(&_registered_snapshot);
                    route = *snap;
                }
            }
        }
        int delivered = 0;
        for (const context* cctx : route) {
            auto* ctx = const_cast<context*>(cctx);
            // post_kernel_call: erase its own packets (by address) under W(map)
            std::unique_lock<std::shared_mutex> w(ctx->spm.map_mutex);
            for (auto& e : s.inst_pkt) {
                auto it = ctx->spm.packet_return_map.find(e.first.get());
                if (it == ctx->spm.packet_return_map.end()) continue;
                ctx->spm.packet_return_map.erase(it);
                if (e.first->kind == packet_kind::spm) { ++delivered; break; }  // kfd_stop + DISPATCH_END
            }
        }
        tr::completion_exit(*seq, s.id, prescan, delivered);
        pause_point();
        queue& q = _queues[static_cast<std::size_t>(s.agent)];
        {
            std::lock_guard<std::mutex> l(q.m);
            tr::atomic_section sec;
            --q.active_kernels;  // async_complete(), the handler's last statement
            tr::completion_signal(s.id);
        }
        q.cv.notify_all();
    }

private:
    int scan(const context* ctx) const {  // caller: atomic_section (slot loads)
        int r = R_OK;
        for (auto& slot : _slots) {
            const context* o = slot.load();
            if (!o) continue;
            if (o == ctx) return R_ALREADY;
            if (ctx->spm.intersects(o->spm)) r = R_CONFLICT;
        }
        return r;
    }
    std::size_t reserve_slot() const {  // a null slot (reservation is num_active + the marker)
        for (std::size_t i = 0; i < _slots.size(); ++i)
            if (_slots[i].load() == nullptr && !_taken(i)) return i;
        return 0;
    }
    bool _taken(std::size_t i) const {
        // a slot picked by a start that has not published yet (no-marker variants) is skipped: one
        // slot per context is the model's [INF] gap, the SDK could hand both starts the same index
        for (int c : _reserved)
            if (_reserved_idx.count(c) && _reserved_idx.at(c) == i) return true;
        return false;
    }
    std::uint64_t agents_mask(const context* ctx) const {
        if (!_v.scoped) return 0;
        std::uint64_t m = 0;
        for (const auto& a : ctx->spm.agents) m |= std::uint64_t{1} << _qc.index_of(a);
        return m;
    }
    agent_handle_set_t scope_of(const context* ctx) const {
        return _v.scoped ? ctx->spm.agents : agent_handle_set_t{};
    }

    const options& _o;
    lc_variant _v;
    QueueController _qc;
    std::vector<std::unique_ptr<context>> _contexts;
    std::vector<std::atomic<const context*>> _slots;  // active slots (CAS publish / clear)
    std::atomic<std::int64_t> _num_active{0};
    std::mutex _contexts_mutex;  // get_contexts_mutex()
    std::condition_variable _cv;
    std::unordered_set<int> _stopping;  // start/stop in-progress markers
    std::unordered_set<int> _reserved;  // starts between reservation and publish
    std::unordered_map<int, std::size_t> _reserved_idx;
    std::mutex _registry_mutex;
    bool _registered[8] = {};
    std::shared_ptr<const std::vector<const context*>> _registered_snapshot;
    std::mutex _callback_cache;
    std::atomic<std::int64_t> _client_id{1};
    std::atomic<std::int64_t> _newest_id{0};
    int _ids = 0;
    std::int64_t _spm_tag = -1004;
    std::vector<queue> _queues;
    std::mutex _completion_mutex;
    std::condition_variable _completion_cv;
    std::deque<std::unique_ptr<session>> _completions;
};

void seed_thread(const options& o, char role, int i) {
    auto& p = pause_config();
    p.rng.seed(o.seed * 1000003u + static_cast<std::uint64_t>(role) * 131u + static_cast<std::uint64_t>(i));
    p.jitter = o.jitter;
    p.gap_us = static_cast<std::uint32_t>(o.gap_us);
    spmcheck::trace::set_thread_name(trace_thread_name(role, i));
}

}  // namespace

int run_lifecycle(const options& o) {
    lc_variant v;
    if (!lc_variant_named(o.variant, v)) {
        std::fprintf(stderr, "spmcheck-impl: unknown lifecycle variant '%s'\n", o.variant.c_str());
        return 2;
    }
    if (o.agents > 4 || o.contexts > 4 || o.tools > 8) {
        std::fprintf(stderr, "spmcheck-impl: lifecycle sizes: agents<=4, contexts<=4, tools<=8\n");
        return 2;
    }
    lifecycle lc(o, v);
    tr::lifecycle_header(o.variant, o.agents, o.contexts, o.tools, o.dispatches, o.max_ids, o.timeouts, false,
                         false, " seed=" + std::to_string(o.seed) + " ops=" + std::to_string(o.tool_ops) +
                                    " source=spmcheck-impl-cpp");
    std::vector<std::thread> threads;
    for (int i = 0; i < o.tools; ++i)
        threads.emplace_back([&, i] {
            seed_thread(o, 't', i);
            auto& rng = pause_config().rng;
            for (int done = 0; done < o.tool_ops; ++done) {
                const int c = std::uniform_int_distribution<int>(0, o.contexts - 1)(rng);
                // weights as the Python recorder: start 6, stop 6, set_agents 3, register 6, add_callback 1
                std::vector<std::pair<int, int>> ops{{0, 6}, {1, 6}, {2, 3}};
                if (!lc.registered(c)) ops.push_back({3, 6});
                ops.push_back({4, 1});
                int total = 0;
                for (auto& p : ops) total += p.second;
                int pick = std::uniform_int_distribution<int>(0, total - 1)(rng);
                int op = 0;
                for (auto& p : ops) { if (pick < p.second) { op = p.first; break; } pick -= p.second; }
                switch (op) {
                case 0: if (lc.registered(c)) lc.start(c); break;
                case 1: lc.stop(c); break;
                case 2: lc.set_agents(c, std::uniform_int_distribution<std::uint64_t>(0, (1u << o.agents) - 1)(rng)); break;
                case 3: lc.register_context(c); break;
                default: lc.add_callback(); break;
                }
                pause_point();
            }
        });
    threads.emplace_back([&] {
        seed_thread(o, 'd', 0);
        auto& rng = pause_config().rng;
        for (int k = 0; k < o.dispatches; ++k) {
            lc.dispatch(k, std::uniform_int_distribution<int>(0, o.agents - 1)(rng));
            std::this_thread::sleep_for(std::chrono::microseconds(
                std::uniform_int_distribution<int>(0, 500)(rng)));
        }
    });
    threads.emplace_back([&] {
        seed_thread(o, 'h', 0);
        lc.complete_all(o.dispatches);
    });
    for (auto& t : threads) t.join();
    return 0;
}

}  // namespace impl
