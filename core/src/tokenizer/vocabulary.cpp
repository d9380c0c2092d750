#include "vocabulary.h"

#include "attnscope/runtime/error.h"

#include <nlohmann/json.hpp>

namespace attnscope::tok {

void Vocabulary::add(const std::string& token, std::int64_t id, const std::string& where) {
    if (id < 0 || id > (std::int64_t{1} << 31))
        throw Error(where + ": token '" + token + "' has an invalid id " + std::to_string(id));
    auto it = ids_.find(token);
    const std::string* stored;
    if (it != ids_.end()) {
        it->second = id;
        stored = &*std::find_if(storage_.begin(), storage_.end(), [&](const std::string& s) { return s == token; });
    } else {
        storage_.push_back(token);
        stored = &storage_.back();
        ids_.emplace(std::string_view(*stored), id);
    }
    const auto i = static_cast<std::size_t>(id);
    if (byId_.size() <= i) byId_.resize(i + 1, nullptr);
    byId_[i] = stored;
}

Vocabulary Vocabulary::fromJsonObject(const nlohmann::json& j, const std::string& where) {
    if (!j.is_object()) throw Error(where + ": 'vocab' must be an object {token: id}");
    Vocabulary v;
    v.ids_.reserve(j.size());
    for (auto it = j.begin(); it != j.end(); ++it) {
        if (!it.value().is_number_integer())
            throw Error(where + ": token '" + it.key() + "' has an invalid id " + it.value().dump());
        v.add(it.key(), it.value().get<std::int64_t>(), where);
    }
    return v;
}

}  // namespace attnscope::tok
