// The data path of rocprofiler-sdk's SPM queue serialization, as C++ threads: the state the
// SDK keeps (per agent: the profiler_serializer with its transition barriers; per queue:
// Queue::_active_kernels, the WriteInterceptor's cached gate, the packets of the current write;
// per SPM context: the active slot, dispatch_spm.enabled, the start/stop marker), and the
// revision knobs of spec/datapath/variants.py. The threads and their steps are in datapath.cpp.
//
// Every step of the protocol is one critical section under the world mutex, at the granularity
// spec/datapath/protocol.py writes (each model action is one step); a step whose condition
// does not hold waits on the condition variable, as the SDK's signal waits and locks do. The
// event a step emits is appended inside that critical section, so the log's order is the order
// the steps took effect.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace spmdp {

constexpr int kPkts = 2;  // packets per write (spec/datapath: PKTS)
constexpr int kBars = 2;  // transition barrier slots per agent (BARS)
constexpr int kMaxQueues = 2;
constexpr int kMaxCtx = 4;

// revision knobs (spec/datapath/variants.py DVariant), passed on the command line
struct Knobs {
    bool early_async = false;      // queue.async_started() before the hooks, for every batch
    bool two_arg = true;           // kernel_completion_signal(queue, is_serialized) for every packet
    bool gate_per_agent = true;    // WriteInterceptor gate: is_active_on_agent vs is_any_active
    bool hook_reads_gate = false;  // hypothetical: hooks honour the write's cached gate
};

// scenario (spec/datapath/protocol.py Scope), passed on the command line
struct Scope {
    int agents = 1, queues = 2, ctxs = 1, tracers = 0, writes = 1, packets = 2;
    bool tracing = true, mixed = false, barrier_second = false, create = true, destroy = false, timeouts = true;
};

enum class Stage { none, queued, ready, done };

struct Packet {
    Stage st = Stage::none;
    bool disp = false;  // a kernel dispatch (else an AQL barrier packet)
    bool ser = false;   // is_serialized: the hooks asked for serialization
    bool rb = false;    // kernel_dispatch emitted ready + block barriers
    bool hd = false;    // the session's completion handler is on this packet's signal
    bool ins = false;   // in a submitted session, not yet completed
    bool sst = false;   // its session was counted in _active_kernels
    std::array<bool, kMaxCtx> sp{};         // carries an SPMPacket of context c
    std::array<bool, kBars> fb{};           // waits behind transition barrier b's fence
    std::array<bool, kBars> cb{};           // barrier b counted this packet's session
};

struct Queue {
    int agent = 0;
    bool alive = false, gone = false;
    int active = 0;             // Queue::_active_kernels
    bool batched = false, raw = false;
    int writes = 0;
    bool ready = false;         // ready_signal consumed
    bool granted = false;       // _dispatch_queue == this queue
    bool waiting = false;       // in _dispatch_ready
    std::array<Packet, kPkts> p{};
};

struct Barrier {
    bool live = false;  // incomplete
    bool old = false;   // sessions in flight complete under ENABLED rules
    std::array<int, kMaxQueues> wait{};   // hsa_barrier queue_waiting[q]
    std::array<bool, kMaxQueues> enq{};   // fence already enqueued on q
};

struct Serializer {
    int refcount = 0;
    bool enabled = false;  // profiler_serializer status ENABLED
    std::array<Barrier, kBars> bar{};
    int newest = 0;
};

struct Context {
    int agent = 0;
    bool slot = false, spm_enabled = false, marker = false, returned = false, queues_shared = false;
    std::array<bool, kMaxQueues> sync_pending{};
};

struct Tracer {
    int agent = 0;
    bool on = false;
};

struct World {
    Knobs k;
    Scope sc;
    std::vector<Serializer> ser;
    std::vector<Queue> q;
    std::vector<Context> c;
    std::vector<Tracer> tt;
};

}  // namespace spmdp
