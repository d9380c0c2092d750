#include "args.h"

#include "attnscope/runtime/error.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace attnscope::cli {

Args::Args(const std::vector<std::string>& argv, const std::set<std::string>& valueOptions,
           const std::set<std::string>& flags) {
    for (std::size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        if (a.size() < 3 || a.rfind("--", 0) != 0) {
            if (a.size() > 1 && a[0] == '-' && !(a.size() > 1 && std::isdigit(static_cast<unsigned char>(a[1]))))
                throw UsageError("unknown option '" + a + "'");
            positionals_.push_back(a);
            continue;
        }
        std::string name = a.substr(2), value;
        const auto eq = name.find('=');
        const bool inlineValue = eq != std::string::npos;
        if (inlineValue) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        if (flags.count(name)) {
            if (inlineValue) throw UsageError("option '--" + name + "' takes no value");
            flags_.insert(name);
        } else if (valueOptions.count(name)) {
            if (!inlineValue) {
                if (i + 1 >= argv.size()) throw UsageError("option '--" + name + "' needs a value");
                value = argv[++i];
            }
            if (values_.count(name)) throw UsageError("option '--" + name + "' is given twice");
            values_[name] = value;
        } else {
            throw UsageError("unknown option '--" + name + "'");
        }
    }
}

std::string Args::positional(std::size_t i, const char* name) const {
    if (i >= positionals_.size()) throw UsageError(std::string("missing ") + name);
    return positionals_[i];
}

void Args::expectPositionals(std::size_t count) const {
    if (positionals_.size() > count) throw UsageError("unexpected argument '" + positionals_[count] + "'");
}

std::optional<std::string> Args::value(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end()) return std::nullopt;
    return it->second;
}

std::string Args::required(const std::string& name) const {
    auto v = value(name);
    if (!v) throw UsageError("option '--" + name + "' is required");
    return *v;
}

std::optional<long long> Args::integer(const std::string& name, long long min, long long max) const {
    auto v = value(name);
    if (!v) return std::nullopt;
    const std::string range = "between " + std::to_string(min) + " and " + std::to_string(max);
    char* end = nullptr;
    errno = 0;
    const long long x = std::strtoll(v->c_str(), &end, 10);
    // strtoll skips leading blanks; a value is only digits with an optional sign.
    if (v->empty() || std::isspace(static_cast<unsigned char>((*v)[0])) || *end != '\0')
        throw Error("--" + name + " needs a whole number " + range + ", got '" + *v + "'");
    if (errno == ERANGE || x < min || x > max)  // strtoll clamps an overflow to LLONG_MIN/MAX
        throw Error("--" + name + " must be " + range + ", got " + *v);
    return x;
}

std::optional<double> Args::number(const std::string& name) const {
    auto v = value(name);
    if (!v) return std::nullopt;
    char* end = nullptr;
    const double x = std::strtod(v->c_str(), &end);
    if (v->empty() || std::isspace(static_cast<unsigned char>((*v)[0])) || *end != '\0' || !std::isfinite(x))
        throw Error("--" + name + " needs a finite number, got '" + *v + "'");
    return x;
}

}  // namespace attnscope::cli
