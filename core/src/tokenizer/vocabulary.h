// A token <-> id table shared by the models; lookups take string_views without allocating.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attnscope::tok {

class Vocabulary {
public:
    // Adds a token; `where` labels errors (duplicate ids are allowed, the last one wins for id->token).
    void add(const std::string& token, std::int64_t id, const std::string& where);
    // {"token": id, ...}; throws naming `where` on a malformed entry.
    static Vocabulary fromJsonObject(const nlohmann::json& j, const std::string& where);

    const std::int64_t* find(std::string_view token) const {
        const auto it = ids_.find(token);
        return it == ids_.end() ? nullptr : &it->second;
    }
    const std::string* token(std::int64_t id) const {
        return id >= 0 && static_cast<std::size_t>(id) < byId_.size() && byId_[static_cast<std::size_t>(id)]
                   ? byId_[static_cast<std::size_t>(id)]
                   : nullptr;
    }
    std::int64_t maxId() const { return static_cast<std::int64_t>(byId_.size()) - 1; }
    std::size_t size() const { return ids_.size(); }

private:
    std::deque<std::string> storage_;  // stable addresses for the views
    std::unordered_map<std::string_view, std::int64_t> ids_;
    std::vector<const std::string*> byId_;
};

}  // namespace attnscope::tok
