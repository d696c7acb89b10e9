// Line-by-line port of the serialization paths of hsa/queue_controller.cpp. Trace events sit at
// the statement they describe; each takes its sequence number under the lock the SDK holds there.
#include "queue_controller.hpp"

#include <stdexcept>

namespace impl {

namespace {
const core_variant kVariants[] = {
    {"final", true, true, true, false},
    {"caller-flag", true, true, false, false},              // ROCm@00327028: if(enable)
    {"stale-lookup", false, true, true, false},             // pre-fix serializer() only
    {"apply-after-unlock", true, false, false, false},      // pre-fix update_serialization() only
    {"pre-fix", false, false, false, false},                // both historical bugs (the real pre-fix code)
    {"global-flag", true, true, false, true},               // G0: one switch, no counting
};
}  // namespace

bool core_variant_named(const std::string& name, core_variant& out) {
    for (const auto& v : kVariants)
        if (v.name == name) { out = v; return true; }
    return false;
}

const char* core_variant_names() { return "final, caller-flag, stale-lookup, apply-after-unlock, pre-fix, global-flag"; }

QueueController::QueueController(core_variant v, int agents) : _v(std::move(v)) {
    for (int i = 0; i < agents; ++i) _agent_records.emplace_back(0x2c0);  // sizeof an agent record
    for (int i = 0; i < agents; ++i) {
        auto h = reinterpret_cast<std::uint64_t>(_agent_records[static_cast<std::size_t>(i)].data());
        _agent_ids.push_back(agent_id{h});
        _index[h] = i;
    }
    // one queue per agent, created before the run (queue creation is not part of the protocol here)
    tr::mute_scope quiet;
    _queues.wlock([&](queue_map_t& q) {
        for (int i = 0; i < agents; ++i) q.emplace(0x1000u + static_cast<unsigned>(i), _agent_ids[static_cast<std::size_t>(i)]);
        return 0;
    });
}

std::uint64_t QueueController::mask_of(const agent_handle_set_t& s) const {
    if (s.empty()) return tr::all_agents;
    std::uint64_t m = 0;
    for (const auto& a : s) m |= std::uint64_t{1} << index_of(a);
    return m;
}

std::shared_ptr<serializer_entry> QueueController::make_entry(const agent_id& a) const {
    return std::make_shared<serializer_entry>("serializer." + std::to_string(index_of(a)));
}

// ---- QueueController::serializer(queue) ----------------------------------------------------------
serializer_entry& QueueController::serializer(const agent_id& agent_id) {
    const int ai = index_of(agent_id);
    tr::lookup_begin(ai);
    serializer_entry* ret = nullptr;
    auto find = [&](const serializer_map_t& m) {
        auto ptr = m.find(agent_id);
        tr::serializer_lookup(ai, ptr != m.end());
        if (ptr != m.end()) { ret = ptr->second.get(); return true; }
        return false;
    };
    auto insert = [&](serializer_map_t& m, bool should_serialize) {
        auto res = m.emplace(agent_id, make_entry(agent_id));
        ret = res.first->second.get();
        tr::serializer_insert(ai, res.second);
        // enable({}) whenever should_serialize -- also on an entry a racing lookup created
        if (should_serialize) ret->wlock([&](profiler_serializer& s) { tr::serializer_enable(ai); s.enable(); return 0; });
        return true;
    };
    if (_v.global_flag) {
        // G0 (ROCm@cbdb3df7): ulock; in the write phase enable if _serialized_enabled.load()
        _profiler_serializer.ulock(find, [&](serializer_map_t& m) {
            auto res = m.emplace(agent_id, make_entry(agent_id));
            ret = res.first->second.get();
            bool should = false;
            {
                tr::atomic_section a;  // the load and the insert event in the flag's order
                should = _serialized_enabled.load();
                tr::serializer_insert(ai, res.second);
            }
            if (should) ret->wlock([&](profiler_serializer& s) { tr::serializer_enable(ai); s.enable(); return 0; });
            return true;
        });
    } else if (_v.lookup_holds_refcount) {
        // post-fix: hold the refcount read lock across the lookup/insertion
        _serialization_refcount.rlock([&](const serialization_refcount& state) {
            const bool should_serialize = state.enabled(agent_id);
            tr::refcount_read(ai, state.count(agent_id));
            _profiler_serializer.ulock(find, [&](serializer_map_t& m) { return insert(m, should_serialize); });
            return 0;
        });
    } else {
        // pre-fix: read the refcount, release it, then look up or insert
        const bool should_serialize = _serialization_refcount.rlock([&](const serialization_refcount& state) {
            tr::refcount_read(ai, state.count(agent_id));
            return state.enabled(agent_id);
        });
        gap_pause();  // the decision is made; the refcount is no longer held
        _profiler_serializer.ulock(find, [&](serializer_map_t& m) { return insert(m, should_serialize); });
    }
    tr::lookup_end(ai);
    return *ret;
}

// ---- QueueController::update_serialization(agents, enable) -----------------------------------------
void QueueController::update_serialization(const agent_handle_set_t& agents, bool enable,
                                           const count_hook& at_count) {
    tr::update_begin(_v.global_flag ? tr::all_agents : mask_of(agents), enable);
    if (_v.global_flag)
        update_global(enable);
    else if (_v.apply_inside_refcount)
        update_post_fix(agents, enable, at_count);
    else
        update_pre_fix(agents, enable);
    tr::update_end();
}

void QueueController::store_flag(bool value) {
    tr::atomic_section a;  // the store and its event in the atomic's modification order
    _serialized_enabled.store(value);
    tr::flag_store(value);
}

void QueueController::update_post_fix(const agent_handle_set_t& agents, bool enable,
                                      const count_hook& at_count) {
    _queues.rlock([&](const queue_map_t& queues) {
        std::unordered_map<agent_id, std::size_t, agent_hash> pd_map;  // per_dev_map: agent -> queues
        for (const auto& kv : queues) pd_map[kv.second] += 1;
        bool any_enabled = false;
        _serialization_refcount.wlock([&](serialization_refcount& state) {
            auto was_enabled = std::unordered_map<agent_id, bool, agent_hash>{};
            _profiler_serializer.rlock([&](const serializer_map_t& serializers) {
                for (const auto& kv : serializers) was_enabled.emplace(kv.first, state.enabled(kv.first));
                return 0;
            });
            if (agents.empty()) {
                const auto old = state.all;
                if (enable) ++state.all;
                else if (state.all > 0) --state.all;
                tr::refcount_change(tr::all_counter, old, state.all);
            } else {
                for (const auto& agent_id : agents) {  // unordered_set order
                    auto& count = state.per_agent[agent_id];
                    const auto old = count;
                    if (enable) ++count;
                    else if (count > 0) --count;
                    tr::refcount_change(index_of(agent_id), old, count);
                }
            }
            if (at_count) at_count();
            _profiler_serializer.wlock([&](serializer_map_t& serializers) {
                for (const auto& kv : serializers) {  // unordered_map order
                    auto itr = was_enabled.find(kv.first);
                    if (itr == was_enabled.end()) continue;
                    const bool now_enabled = state.enabled(kv.first);
                    if (itr->second == now_enabled) continue;
                    const bool on = _v.action_from_count ? now_enabled : enable;
                    const int ai = index_of(kv.first);
                    kv.second->wlock([&](profiler_serializer& s) {
                        if (on) { tr::serializer_enable(ai); s.enable(); }
                        else { tr::serializer_disable(ai); s.disable(); }
                        return 0;
                    });
                }
                return 0;
            });
            any_enabled = state.any();
            return 0;
        });
        gap_pause();
        store_flag(any_enabled);  // the value computed inside the refcount lock
        return 0;
    });
}

// Pre-fix (PR #11869/#11870 prose + the #9932 diff fragment): crossings computed under W(rc),
// applied after releasing it, from the caller's flag.
void QueueController::update_pre_fix(const agent_handle_set_t& agents, bool enable) {
    _queues.rlock([&](const queue_map_t&) {
        bool any_enabled = false;
        std::vector<agent_id> crossed;
        _serialization_refcount.wlock([&](serialization_refcount& state) {
            std::unordered_map<agent_id, bool, agent_hash> was;
            for (const auto& a : _agent_ids) was.emplace(a, state.enabled(a));
            if (agents.empty()) {
                const auto old = state.all;
                if (enable) ++state.all;
                else if (state.all > 0) --state.all;
                tr::refcount_change(tr::all_counter, old, state.all);
            } else {
                for (const auto& agent_id : agents) {
                    auto& count = state.per_agent[agent_id];
                    const auto old = count;
                    if (enable) ++count;
                    else if (count > 0) --count;
                    tr::refcount_change(index_of(agent_id), old, count);
                }
            }
            for (const auto& kv : was)
                if (kv.second != state.enabled(kv.first)) crossed.push_back(kv.first);
            any_enabled = state.any();
            return 0;
        });
        gap_pause();  // crossings computed, the refcount released, not yet applied
        _profiler_serializer.wlock([&](serializer_map_t& m) {
            for (const auto& agent_id : crossed) {
                auto itr = m.find(agent_id);
                if (itr == m.end() || !itr->second) continue;
                const int ai = index_of(agent_id);
                itr->second->wlock([&](profiler_serializer& s) {
                    if (enable) { tr::serializer_enable(ai); s.enable(); }
                    else { tr::serializer_disable(ai); s.disable(); }
                    return 0;
                });
            }
            return 0;
        });
        gap_pause();
        store_flag(any_enabled);
        return 0;
    });
}

// G0 (mirror develop / ROCm@cbdb3df7 enable_serialization()/disable_serialization()).
void QueueController::update_global(bool enable) {
    _queues.rlock([&](const queue_map_t&) {
        store_flag(enable);
        gap_pause();  // the switch is stored, the entries not yet updated
        _profiler_serializer.wlock([&](serializer_map_t& m) {
            for (auto& kv : m) {
                const int ai = index_of(kv.first);
                kv.second->wlock([&](profiler_serializer& s) {
                    if (enable) { tr::serializer_enable(ai); s.enable(); }
                    else { tr::serializer_disable(ai); s.disable(); }
                    return 0;
                });
            }
            return 0;
        });
        return 0;
    });
}

}  // namespace impl
