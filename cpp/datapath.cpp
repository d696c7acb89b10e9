// spmcheck-datapath: the data path (datapath.hpp) run by real threads, writing a v2 log
// (`model=datapath`) that `spmcheck check` reads.
//
//   q<i>   a queue's application thread: create_queue, WriteInterceptor writes (the gate computed
//          once per call; per packet the SPM enter hook re-reads the active slots, then
//          profiler_serializer::kernel_dispatch), async_started where the revision puts it,
//          submission, destroy_queue
//   g0     the GPU (in-order packet execution, fences, ready/block barriers) and the completion
//          handler (SPM exit hook, kernel_completion_signal, async_complete)
//   c<i>   an SPM context's tool thread: start (marker, publish, enable_serialization, enabled) and
//          stop (marker, enabled cleared, interposition_sync with no timeout, Queue::sync per queue
//          under _queues shared, disable_serialization, slot cleared)
//   tt<i>  a thread-trace context: a second holder of serialization references
//
// A run whose threads all wait on conditions no other thread can change any more (the data
// path's hazards make that happen: a fence that never clears, a drain that never ends) is
// ended there: the log is complete up to the stuck state, and the checker judges it (CHK104).
//
// Usage: spmcheck-datapath --variant NAME --scope NAME [knobs] [scope fields] --seed N -o FILE
// (spmcheck record --model datapath --impl cpp passes the knobs and fields of spec/datapath).
#include "datapath.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <random>
#include <thread>

namespace spmdp {
namespace {

using Clock = std::chrono::steady_clock;

std::string b01(bool v) { return v ? "1" : "0"; }

class Run {
public:
    World w;
    std::mutex m;
    std::condition_variable cv;
    std::vector<std::string> log;
    bool stalled = false;
    int sync_ms = 20;

    explicit Run(int threads) : waiting_(threads, -1), done_(threads, false) {}

    // the step's event, inside its critical section
    void emit(const std::string& thread, const std::string& body) {
        log.push_back(std::to_string(log.size() + 1) + " " + thread + " " + body);
        ++gen_;
        cv.notify_all();
    }

    // Wait until `ready(expired)` holds; `deadline`: a timed wait (Queue::sync's 5 s, scaled),
    // after which `expired` is true. False when the run stalled: every live thread waits on a
    // condition evaluated false since the last step, so none of them can change anything.
    bool wait(std::unique_lock<std::mutex>& lk, int self, const std::function<bool(bool)>& ready,
              Clock::time_point deadline = Clock::time_point::max()) {
        for (;;) {
            if (stalled) return false;
            const bool timed = deadline != Clock::time_point::max();
            const bool expired = timed && Clock::now() >= deadline;
            if (ready(expired)) {
                waiting_[self] = -1;
                return true;
            }
            if (timed && !expired) {  // a timed wait is not stuck: time alone will change it
                waiting_[self] = -1;
                cv.wait_until(lk, std::min(deadline, Clock::now() + std::chrono::milliseconds(5)));
                continue;
            }
            waiting_[self] = static_cast<long long>(gen_);
            if (all_stuck()) {
                stalled = true;
                cv.notify_all();
                return false;
            }
            cv.wait_for(lk, std::chrono::milliseconds(5));
        }
    }

    void finish(int self) {
        done_[self] = true;
        waiting_[self] = -1;
        ++gen_;
        cv.notify_all();
    }

    bool others_done(int self) const {
        for (size_t i = 0; i < done_.size(); ++i)
            if (static_cast<int>(i) != self && !done_[i]) return false;
        return true;
    }

private:
    std::vector<long long> waiting_;  // generation at which the thread last found its condition false
    std::vector<bool> done_;
    unsigned long long gen_ = 0;

    bool all_stuck() const {
        for (size_t i = 0; i < done_.size(); ++i)
            if (!done_[i] && waiting_[i] != static_cast<long long>(gen_)) return false;
        return true;
    }
};

// ---- serializer: update_serialization(enable, {a}) as one step -------------------------------
bool push_of(const World& w, int a, bool enable) {
    int old = w.ser[a].refcount;
    bool trans = enable ? old == 0 : old == 1;
    bool counted = false;
    for (const Queue& q : w.q)
        counted = counted || (q.agent == a && q.alive && q.active > 0);
    return trans && counted;  // with no session in flight set_barrier completes at once
}

bool room(const World& w, int a, bool enable) {
    const Serializer& s = w.ser[a];
    return !push_of(w, a, enable) || !s.bar[0].live || !s.bar[1].live;
}

void update(World& w, int a, bool enable) {
    Serializer& s = w.ser[a];
    int old = s.refcount;
    bool trans = enable ? old == 0 : old == 1;
    bool push = push_of(w, a, enable);
    bool live0 = s.bar[0].live;
    s.refcount = enable ? old + 1 : (old > 0 ? old - 1 : old);
    if (trans) s.enabled = enable;
    if (push) s.newest = !live0 ? 0 : 1;
    for (int b = 0; b < kBars; ++b) {
        bool fresh = push && (b == 0 ? !live0 : live0);
        if (!fresh) continue;
        Barrier& br = s.bar[b];
        br.live = true;
        br.old = !enable;
        for (size_t qi = 0; qi < w.q.size(); ++qi) {
            Queue& q = w.q[qi];
            br.wait[qi] = (q.agent == a && q.alive) ? q.active : 0;  // set_barrier: _active_kernels per queue
            br.enq[qi] = false;
            for (int k = 0; k < kPkts; ++k)
                if (q.agent == a) q.p[k].cb[b] = q.p[k].sst;
        }
    }
}

void reset(Packet& p, bool fences) {
    bool disp = p.disp;
    std::array<bool, kBars> fb = p.fb;
    p = Packet{};
    p.disp = disp;
    if (!fences) p.fb = fb;
}

bool spm_on(const World& w, int a, bool per_agent) {
    for (const Context& c : w.c)
        if (c.slot && (!per_agent || c.agent == a)) return true;
    return false;
}

bool tt_on(const World& w, int a, bool per_agent) {
    for (const Tracer& t : w.tt)
        if (t.on && (!per_agent || t.agent == a)) return true;
    return false;
}

struct Rand {
    std::mt19937_64 g;
    explicit Rand(uint64_t seed) : g(seed) {}
    int below(int n) { return static_cast<int>(g() % static_cast<uint64_t>(n)); }
    void pause() { std::this_thread::sleep_for(std::chrono::microseconds(below(300))); }
};

// One protocol step of a thread: a random pause, then `fire` inside the world lock once
// `ready` holds (false when the run stalled first)
bool step_in(Run& r, std::unique_lock<std::mutex>& lk, int self, Rand& rnd,
             const std::function<bool(bool)>& ready, const std::function<void()>& fire,
             Clock::time_point deadline) {
    rnd.pause();
    lk.lock();
    bool ok = r.wait(lk, self, ready, deadline);
    if (ok) fire();
    lk.unlock();
    return ok;
}

// ---- q<i>: the application thread of one queue -----------------------------------------------
void app(Run& r, int qi, int self, uint64_t seed) {
    World& w = r.w;
    const Scope& sc = w.sc;
    const Knobs& kn = w.k;
    Queue& q = w.q[qi];
    const std::string t = "q" + std::to_string(qi);
    Rand rnd(seed);
    std::unique_lock<std::mutex> lk(r.m, std::defer_lock);
    auto no_queues_shared = [&] {
        for (const Context& c : w.c)
            if (c.queues_shared) return false;
        return true;
    };
    auto step = [&](const std::function<bool(bool)>& ready, const std::function<void()>& fire,
                    Clock::time_point deadline = Clock::time_point::max()) {
        return step_in(r, lk, self, rnd, ready, fire, deadline);
    };
    auto ag = [&] { return std::to_string(q.agent); };
    bool alive = true;
    if (sc.create) {
        int a = rnd.below(sc.agents);
        alive = step([&](bool) { return no_queues_shared(); }, [&] {  // create_queue: _queues exclusive
            q.agent = a;
            q.alive = true;
            r.emit(t, "queue_create agent=" + ag());
        });
    }
    const bool two = sc.packets == 2;
    for (int n = 0; alive && n < sc.writes; ++n) {
        bool consumers = false, batch = false;
        std::array<bool, kPkts> disp{};  // this write's packet kinds, read outside the lock below
        bool choose = sc.mixed && !sc.barrier_second;
        bool mixed = choose && rnd.below(2) == 1;
        // WriteInterceptor: the gate (raw fast path, batching) is computed once, for the whole call
        alive = step([&](bool) { return q.alive && q.p[0].st == Stage::none && q.p[1].st == Stage::none; }, [&] {
            bool spm = spm_on(w, q.agent, kn.gate_per_agent), tt = tt_on(w, q.agent, kn.gate_per_agent);
            consumers = sc.tracing || spm || tt;
            batch = consumers && !spm && !tt;
            q.raw = !consumers;
            q.batched = batch;
            q.writes += 1;
            q.p[0].disp = true;
            if (two) q.p[1].disp = sc.mixed ? (sc.barrier_second ? false : !mixed) : true;
            disp = {q.p[0].disp, q.p[1].disp};
            r.emit(t, "write_begin agent=" + ag() + (choose ? " mixed=" + b01(mixed) : "") + " raw=" +
                          b01(!consumers) + " batched=" + b01(batch));
        });
        if (!alive) break;
        auto any = [](bool) { return true; };
        if (!consumers) {  // no_real_consumers: the packets go to the writer as they are
            alive = step(any, [&] {
                for (int k = 0; k < sc.packets; ++k) q.p[k].st = Stage::queued;
                r.emit(t, "write_raw agent=" + ag());
            });
            continue;
        }
        auto async_started = [&](std::vector<int> ks) {
            return step(any, [&] {
                q.active += 1;
                for (int k : ks) q.p[k].sst = ks.size() > 1 ? q.p[k].disp : true;
                r.emit(t, "async_started agent=" + ag() + " active=" + std::to_string(q.active));
            });
        };
        auto hook = [&](int k) {  // the SPM enter hook re-reads the active slots, per packet
            return step(any, [&] {
                bool skip = kn.hook_reads_gate && q.batched;
                bool spm = false;
                for (size_t ci = 0; ci < w.c.size(); ++ci) {
                    const Context& c = w.c[ci];
                    q.p[k].sp[ci] = !skip && c.slot && c.agent == q.agent && c.spm_enabled;
                    spm = spm || (c.slot && c.agent == q.agent);
                }
                q.p[k].ser = !skip && spm;
                r.emit(t, "enter_hook agent=" + ag() + " packet=" + std::to_string(k) + " serialize=" + b01(q.p[k].ser));
            });
        };
        auto kernel_dispatch = [&](int k) {  // profiler_serializer::kernel_dispatch
            return step(any, [&] {
                Serializer& s = w.ser[q.agent];
                bool sd = q.p[k].ser;
                bool fence = false;
                std::array<bool, kBars> e{};
                for (int b = 0; b < kBars; ++b) {
                    e[b] = sd && s.newest == b && s.bar[b].live && !s.bar[b].enq[qi];
                    fence = fence || e[b];
                }
                q.p[k].rb = sd && s.enabled;
                for (int b = 0; b < kBars; ++b) {
                    q.p[k].fb[b] = e[b];
                    s.bar[b].enq[qi] = s.bar[b].enq[qi] || e[b];
                }
                r.emit(t, "kernel_dispatch agent=" + ag() + " packet=" + std::to_string(k) + " serialized=" +
                              b01(q.p[k].rb) + " fence=" + b01(fence));
            });
        };
        auto submit = [&](std::vector<int> ks, std::array<bool, kPkts> handler) {
            return step(any, [&] {
                bool has = false;
                for (int k : ks) has = has || q.p[k].disp;
                int before = q.active;
                if (!kn.early_async) {  // async_started only when there is packet data
                    if (has) q.active += 1;
                    for (int k : ks) q.p[k].sst = q.p[k].disp;
                }
                std::string pk;
                for (int k : ks) {
                    q.p[k].st = Stage::queued;
                    q.p[k].ins = q.p[k].disp;
                    q.p[k].hd = handler[k];
                    pk += (pk.empty() ? "" : ",") + std::to_string(k);
                }
                int shown = kn.early_async ? before : (has ? before + 1 : before);
                r.emit(t, "submit agent=" + ag() + " packets=" + pk + " active=" + std::to_string(shown));
            });
        };
        if (batch) {  // one process_packet_batch for the whole write
            std::vector<int> ks = two ? std::vector<int>{0, 1} : std::vector<int>{0};
            if (kn.early_async) alive = alive && async_started(ks);
            alive = alive && hook(0) && kernel_dispatch(0);
            if (two) {
                if (alive && disp[1]) alive = hook(1) && kernel_dispatch(1);
                alive = alive && submit({0, 1}, {!disp[1], disp[1]});
            } else {
                alive = alive && submit({0}, {true, false});
            }
        } else {  // one process_packet_batch per packet
            for (int k = 0; alive && k < sc.packets; ++k) {
                if (kn.early_async) alive = async_started({k});
                if (alive && disp[k]) alive = hook(k) && kernel_dispatch(k);
                std::array<bool, kPkts> h{};
                h[k] = disp[k];
                alive = alive && submit({k}, h);
            }
        }
    }
    if (alive && sc.destroy) {  // destroy_queue: Queue::sync (5 s, scaled), erase under _queues W
        auto deadline = Clock::now() + std::chrono::milliseconds(r.sync_ms);
        step([&](bool expired) { return no_queues_shared() && (q.active == 0 || (sc.timeouts && expired)); },
             [&] {
                 bool synced = q.active == 0;
                 q.alive = false;
                 q.gone = true;
                 r.emit(t, "queue_destroy agent=" + ag() + " synced=" + b01(synced));
             },
             sc.timeouts ? deadline : Clock::time_point::max());
    }
    std::lock_guard<std::mutex> g(r.m);
    r.finish(self);
}

// ---- g0: the GPU and the completion handler ----------------------------------------------------
struct GpuStep {
    int kind;  // 0 barrier_packet, 1 kernel_start, 2 ready_barrier, 3 block_barrier, 4 packet_retire, 5 completion
    int q, k;
};

const char* const kGpuKinds[] = {"barrier_packet", "kernel_start", "ready_barrier", "block_barrier",
                                 "packet_retire", "completion"};

bool completion_ready(const Queue& q, int k) {
    const Packet& p = q.p[k];
    if (!p.ins) return false;
    if (!q.batched) return p.hd && p.st == Stage::done;
    bool fired = false;
    for (const Packet& x : q.p) fired = fired || (x.hd && x.st == Stage::done);
    return fired && p.st == Stage::done && (k == 0 || !q.p[0].ins);
}

std::vector<GpuStep> gpu_enabled(const World& w) {
    std::vector<GpuStep> out;
    for (size_t qi = 0; qi < w.q.size(); ++qi) {
        const Queue& q = w.q[qi];
        for (int k = 0; k < w.sc.packets; ++k) {
            const Packet& p = q.p[k];
            bool head = p.st == Stage::queued && (k == 0 || q.p[k - 1].st == Stage::done || q.p[k - 1].st == Stage::none)
                        && !p.fb[0] && !p.fb[1];
            int i = static_cast<int>(qi);
            if (head && !p.disp) out.push_back({0, i, k});
            if (head && p.disp && !p.rb) out.push_back({1, i, k});
            if (head && p.rb && !q.ready) out.push_back({2, i, k});
            if (p.st == Stage::ready && q.granted) out.push_back({3, i, k});
            if (p.st == Stage::done && !p.ins) out.push_back({4, i, k});
            if (completion_ready(q, k)) out.push_back({5, i, k});
        }
    }
    return out;
}

std::string gpu_fire(World& w, const GpuStep& s) {
    Queue& q = w.q[s.q];
    Packet& p = q.p[s.k];
    const int a = q.agent;
    std::string head = std::string(kGpuKinds[s.kind]) + " queue=q" + std::to_string(s.q) + " agent=" +
                       std::to_string(a) + " packet=" + std::to_string(s.k);
    switch (s.kind) {
    case 0:  // an AQL barrier packet of a mixed write executes and leaves
    case 4:  // a dispatch in no session (raw, or its session already completed) leaves
        reset(p, true);
        return head;
    case 1:
    case 3:  // the kernel runs (after the grant, for a serialized one); its completion signal fires
        p.st = Stage::done;
        return head;
    case 2: {  // ready barrier: queue_ready grants, or queues it in _dispatch_ready
        bool anyg = false;
        for (const Queue& o : w.q) anyg = anyg || (o.agent == a && o.granted);
        p.st = Stage::ready;
        q.ready = true;
        q.granted = !anyg;
        q.waiting = anyg;
        return head + " granted=" + b01(!anyg);
    }
    default:
        break;
    }
    // completion: SPM exit hook, kernel_completion_signal, async_complete after the session's last packet
    Serializer& sr = w.ser[a];
    const bool last = q.batched ? (s.k == 0 ? !q.p[1].ins : true) : true;
    const bool signals = w.k.two_arg ? true : p.ser;
    std::array<bool, kBars> tracked{};
    for (int b = 0; b < kBars; ++b) tracked[b] = signals && sr.bar[b].wait[s.q] > 0;
    const bool t0 = tracked[0], t1 = tracked[1];
    const bool state = (t0 && t1) ? (sr.newest == 0 ? sr.bar[1].old : sr.bar[0].old)
                       : t0 ? sr.bar[0].old : t1 ? sr.bar[1].old : sr.enabled;
    const bool hand = p.ser && state;
    for (int b = 0; b < kBars; ++b) {
        Barrier& br = sr.bar[b];
        bool others_zero = true;
        for (size_t o = 0; o < w.q.size(); ++o)
            if (static_cast<int>(o) != s.q && br.wait[o] != 0) others_zero = false;
        bool clears = br.live && tracked[b] && br.wait[s.q] == 1 && others_zero;
        if (tracked[b]) br.wait[s.q] -= 1;
        if (clears) {
            br.live = false;
            for (size_t o = 0; o < w.q.size(); ++o) {
                br.enq[o] = false;
                if (w.q[o].agent == a)
                    for (Packet& x : w.q[o].p) x.fb[b] = false;
            }
        }
    }
    if (hand) {  // the grant passes to the next queue in _dispatch_ready
        for (Queue& o : w.q)
            if (o.agent == a) {
                o.granted = o.waiting;
                o.waiting = false;
            }
        q.ready = false;
    }
    if (last && q.active > 0) q.active -= 1;
    reset(p, false);
    return head + " released=" + b01(hand) + " session_end=" + b01(last);
}

void gpu(Run& r, int self, uint64_t seed) {
    Rand rnd(seed);
    std::unique_lock<std::mutex> lk(r.m, std::defer_lock);
    for (;;) {
        rnd.pause();
        lk.lock();
        std::vector<GpuStep> en;
        bool ok = r.wait(lk, self, [&](bool) {
            en = gpu_enabled(r.w);
            return !en.empty() || r.others_done(self);
        });
        if (!ok || en.empty()) {
            r.finish(self);
            return;
        }
        const GpuStep s = en[rnd.below(static_cast<int>(en.size()))];
        r.emit("g0", gpu_fire(r.w, s));
        lk.unlock();
    }
}

// ---- c<i>: one SPM context's tool thread ---------------------------------------------------------
void tool(Run& r, int ci, int self, uint64_t seed) {
    World& w = r.w;
    Context& c = w.c[ci];
    const std::string t = "c" + std::to_string(ci);
    Rand rnd(seed);
    std::unique_lock<std::mutex> lk(r.m, std::defer_lock);
    auto step = [&](const std::function<bool(bool)>& ready, const std::function<void()>& fire,
                    Clock::time_point deadline = Clock::time_point::max()) {
        return step_in(r, lk, self, rnd, ready, fire, deadline);
    };
    auto no_marks = [&] {
        for (const Context& o : w.c)
            if (o.marker) return false;
        return true;
    };
    auto any = [](bool) { return true; };
    const int a = rnd.below(w.sc.agents);
    const std::string ag = std::to_string(a);
    bool ok = step([&](bool) {  // context::start_context: marker, conflict scan, publish
        if (!no_marks()) return false;
        for (const Context& o : w.c)
            if (o.slot && o.agent == a) return false;
        return true;
    }, [&] {
        c.marker = true;
        c.agent = a;
        c.slot = true;
        r.emit(t, "context_start agent=" + ag);
    });
    ok = ok && step([&](bool) { return room(w, a, true); }, [&] {
        update(w, a, true);
        r.emit(t, "serialization_enable agent=" + ag);
    });
    ok = ok && step(any, [&] {
        c.spm_enabled = true;
        c.marker = false;
        r.emit(t, "spm_enabled");
    });
    if (ok) std::this_thread::sleep_for(std::chrono::microseconds(rnd.below(2000)));  // collecting
    ok = ok && step([&](bool) { return no_marks(); }, [&] {
        c.marker = true;
        c.spm_enabled = false;
        r.emit(t, "context_stop");
    });
    ok = ok && step([&](bool) {  // interposition_sync: no timeout
        for (const Queue& q : w.q)
            for (const Packet& p : q.p)
                if (p.ins) return false;
        return true;
    }, [&] { r.emit(t, "interposition_sync"); });
    ok = ok && step(any, [&] {
        c.queues_shared = true;
        for (size_t qi = 0; qi < w.q.size(); ++qi) c.sync_pending[qi] = w.q[qi].alive;
        r.emit(t, "queues_lock");
    });
    for (size_t qi = 0; ok && qi < w.q.size(); ++qi) {
        if (!c.sync_pending[qi]) continue;  // written only by this thread
        auto deadline = Clock::now() + std::chrono::milliseconds(r.sync_ms);
        ok = step([&](bool expired) { return w.q[qi].active == 0 || (w.sc.timeouts && expired); }, [&] {
            bool drained = w.q[qi].active == 0;
            c.sync_pending[qi] = false;
            r.emit(t, "queue_sync queue=q" + std::to_string(qi) + " drained=" + b01(drained));
        }, w.sc.timeouts ? deadline : Clock::time_point::max());
    }
    ok = ok && step([&](bool) { return room(w, a, false); }, [&] {
        c.queues_shared = false;
        update(w, a, false);
        r.emit(t, "serialization_disable agent=" + ag);
    });
    ok = ok && step(any, [&] {
        c.slot = false;
        c.marker = false;
        c.returned = true;
        r.emit(t, "context_cleared");
    });
    std::lock_guard<std::mutex> g(r.m);
    r.finish(self);
}

// ---- tt<i>: a thread-trace context ----------------------------------------------------------------
void tracer(Run& r, int ti, int self, uint64_t seed) {
    World& w = r.w;
    Rand rnd(seed);
    const int a = rnd.below(w.sc.agents);
    std::this_thread::sleep_for(std::chrono::microseconds(rnd.below(1500)));
    std::unique_lock<std::mutex> lk(r.m);
    if (r.wait(lk, self, [&](bool) { return room(w, a, true); })) {
        w.tt[ti].on = true;
        w.tt[ti].agent = a;
        update(w, a, true);
        r.emit("tt" + std::to_string(ti), "tt_start agent=" + std::to_string(a));
    }
    r.finish(self);
}

int flag(const char* v, const char* name) {
    char* end = nullptr;
    long x = std::strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || x < 0 || x > 1000000) {
        std::fprintf(stderr, "spmcheck-datapath: %s wants a number, got '%s'\n", name, v);
        std::exit(2);
    }
    return static_cast<int>(x);
}

}  // namespace
}  // namespace spmdp

int main(int argc, char** argv) {
    using namespace spmdp;
    Knobs kn;
    Scope sc;
    std::string variant, scope, out;
    uint64_t seed = 1;
    int sync_ms = 20;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (i + 1 >= argc) {
            std::fprintf(stderr, "spmcheck-datapath: %s needs a value\n", a.c_str());
            return 2;
        }
        const char* v = argv[++i];
        if (a == "--variant") variant = v;
        else if (a == "--scope") scope = v;
        else if (a == "-o") out = v;
        else if (a == "--seed") seed = static_cast<uint64_t>(flag(v, "--seed"));
        else if (a == "--sync-ms") sync_ms = flag(v, "--sync-ms");
        else if (a == "--early-async") kn.early_async = flag(v, "--early-async");
        else if (a == "--two-arg") kn.two_arg = flag(v, "--two-arg");
        else if (a == "--gate-per-agent") kn.gate_per_agent = flag(v, "--gate-per-agent");
        else if (a == "--hook-reads-gate") kn.hook_reads_gate = flag(v, "--hook-reads-gate");
        else if (a == "--agents") sc.agents = flag(v, "--agents");
        else if (a == "--queues") sc.queues = flag(v, "--queues");
        else if (a == "--ctxs") sc.ctxs = flag(v, "--ctxs");
        else if (a == "--tracers") sc.tracers = flag(v, "--tracers");
        else if (a == "--writes") sc.writes = flag(v, "--writes");
        else if (a == "--packets") sc.packets = flag(v, "--packets");
        else if (a == "--tracing") sc.tracing = flag(v, "--tracing");
        else if (a == "--mixed") sc.mixed = flag(v, "--mixed");
        else if (a == "--barrier-second") sc.barrier_second = flag(v, "--barrier-second");
        else if (a == "--create") sc.create = flag(v, "--create");
        else if (a == "--destroy") sc.destroy = flag(v, "--destroy");
        else if (a == "--timeouts") sc.timeouts = flag(v, "--timeouts");
        else {
            std::fprintf(stderr, "spmcheck-datapath: unknown option %s\n", a.c_str());
            return 2;
        }
    }
    if (variant.empty() || scope.empty() || out.empty() || sc.agents < 1 || sc.queues < 1 || sc.queues > kMaxQueues ||
        sc.ctxs > kMaxCtx || sc.packets < 1 || sc.packets > kPkts) {
        std::fprintf(stderr, "spmcheck-datapath: needs --variant, --scope, -o; 1-%d queues, at most %d contexts, "
                             "1-%d packets\n", kMaxQueues, kMaxCtx, kPkts);
        return 2;
    }
    const int threads = sc.queues + 1 + sc.ctxs + sc.tracers;
    Run r(threads);
    r.sync_ms = sync_ms;
    r.w.k = kn;
    r.w.sc = sc;
    r.w.ser.assign(sc.agents, Serializer{});
    r.w.q.assign(sc.queues, Queue{});
    for (Queue& q : r.w.q) q.alive = !sc.create;  // without create, the queues exist on agent 0
    r.w.c.assign(sc.ctxs, Context{});
    r.w.tt.assign(sc.tracers, Tracer{});
    std::vector<std::thread> ts;
    int self = 0;
    for (int i = 0; i < sc.queues; ++i, ++self) ts.emplace_back(app, std::ref(r), i, self, seed * 1000 + self);
    ts.emplace_back(gpu, std::ref(r), self, seed * 1000 + self);
    ++self;
    for (int i = 0; i < sc.ctxs; ++i, ++self) ts.emplace_back(tool, std::ref(r), i, self, seed * 1000 + self);
    for (int i = 0; i < sc.tracers; ++i, ++self) ts.emplace_back(tracer, std::ref(r), i, self, seed * 1000 + self);
    for (std::thread& t : ts) t.join();
    std::FILE* f = std::fopen(out.c_str(), "w");
    if (!f) {
        std::fprintf(stderr, "spmcheck-datapath: cannot write %s\n", out.c_str());
        return 4;
    }
    std::fprintf(f, "spmcheck-trace v2 model=datapath variant=%s scope=%s source=spmcheck-cpp seed=%llu end_marker=1\n",
                 variant.c_str(), scope.c_str(), static_cast<unsigned long long>(seed));
    for (const std::string& ln : r.log) std::fprintf(f, "%s\n", ln.c_str());
    std::fprintf(f, "%zu run_end\n", r.log.size() + 1);
    bool bad = std::fclose(f) != 0;
    std::printf("%zu events%s\n", r.log.size(), r.stalled ? ", stalled" : "");
    return bad ? 4 : 0;
}
