// QueueController::serializer() and update_serialization() as the SDK code has them
// (hsa/queue_controller.{hpp,cpp} @ amd-vkale/rocm-systems 5d4ce3a9; earlier revisions as variants).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "synchronized.hpp"

namespace impl {

// rocprofiler_agent_id_t: an opaque handle (the SDK uses the address of the agent record).
struct agent_id {
    std::uint64_t handle;
    bool operator==(const agent_id& o) const { return handle == o.handle; }
};
struct agent_hash {
    std::size_t operator()(const agent_id& a) const { return std::hash<std::uint64_t>{}(a.handle); }
};
using agent_handle_set_t = std::unordered_set<agent_id, agent_hash>;

struct core_variant {
    std::string name;
    bool lookup_holds_refcount = true;  // serializer(): R(rc) across lookup + insert (post-fix)
    bool apply_inside_refcount = true;  // update_serialization(): transitions under W(rc) (post-fix)
    bool action_from_count = true;      // enable/disable from the post-update count (else caller flag)
    bool global_flag = false;           // pre-refcount era: one `_serialized_enabled` switch
};
bool core_variant_named(const std::string& name, core_variant& out);
const char* core_variant_names();

// hsa::profiler_serializer reduced to its status (enable/disable create no barrier here).
struct profiler_serializer {
    bool enabled = false;
    void enable() { enabled = true; }
    void disable() { enabled = false; }
};
// one traced Synchronized<profiler_serializer> per agent ("serializer.<index>")
struct serializer_entry : synchronized<profiler_serializer> {
    using synchronized<profiler_serializer>::synchronized;
};

class QueueController {
public:
    QueueController(core_variant v, int agents);

    // The agent records; ids are their addresses, as in the SDK. index_of() is only for the trace.
    const std::vector<agent_id>& agents() const { return _agent_ids; }
    int index_of(const agent_id& a) const { return _index.at(a.handle); }
    std::uint64_t mask_of(const agent_handle_set_t& s) const;

    serializer_entry& serializer(const agent_id& agent);  // QueueController::serializer(queue)
    // `at_count` (lifecycle trace): called inside the refcount write lock right after the count
    // changed, where a coarse-grained "update_serialization happened" event takes its seq.
    using count_hook = std::function<void()>;
    void enable_serialization(const agent_handle_set_t& agents, const count_hook& at_count = nullptr) {
        update_serialization(agents, true, at_count);
    }
    void disable_serialization(const agent_handle_set_t& agents, const count_hook& at_count = nullptr) {
        update_serialization(agents, false, at_count);
    }
    bool serialization_enabled() const { return _serialized_enabled.load(); }

private:
    struct serialization_refcount {
        std::int64_t all = 0;
        std::unordered_map<agent_id, std::int64_t, agent_hash> per_agent;
        std::int64_t count(const agent_id& a) const {
            auto itr = per_agent.find(a);
            return all + (itr == per_agent.end() ? 0 : itr->second);
        }
        bool enabled(const agent_id& a) const { return count(a) > 0; }
        bool any() const {
            if (all > 0) return true;
            for (const auto& kv : per_agent)
                if (kv.second > 0) return true;
            return false;
        }
    };
    using serializer_map_t = std::unordered_map<agent_id, std::shared_ptr<serializer_entry>, agent_hash>;
    // one queue per agent; the queue map's content only feeds per_dev_map()
    using queue_map_t = std::unordered_map<std::uint64_t, agent_id>;

    void update_serialization(const agent_handle_set_t& agents, bool enable, const count_hook& at_count);
    void update_post_fix(const agent_handle_set_t& agents, bool enable, const count_hook& at_count);
    void update_pre_fix(const agent_handle_set_t& agents, bool enable);
    void update_global(bool enable);
    void store_flag(bool value);
    std::shared_ptr<serializer_entry> make_entry(const agent_id& a) const;

    core_variant _v;
    std::vector<std::vector<unsigned char>> _agent_records;  // addresses give the handles
    std::vector<agent_id> _agent_ids;
    std::unordered_map<std::uint64_t, int> _index;
    synchronized<queue_map_t> _queues{"queues"};
    std::atomic<bool> _serialized_enabled{false};
    synchronized<serializer_map_t> _profiler_serializer{"serializer_map"};
    synchronized<serialization_refcount> _serialization_refcount{"refcount"};
};

}  // namespace impl
