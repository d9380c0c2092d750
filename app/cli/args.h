// A small command-line parser for attnscope-cli: one command, positionals, --key value options
// and --flags. Usage errors throw UsageError (exit code 1 with a hint).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnscope::cli {

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class Args {
public:
    // valueOptions take a value ("--out DIR" or "--out=DIR"); flags take none.
    Args(const std::vector<std::string>& argv, const std::set<std::string>& valueOptions,
         const std::set<std::string>& flags);

    const std::vector<std::string>& positionals() const { return positionals_; }
    std::string positional(std::size_t i, const char* name) const;  // throws UsageError when absent
    bool flag(const std::string& name) const { return flags_.count(name) > 0; }
    std::optional<std::string> value(const std::string& name) const;
    std::string required(const std::string& name) const;
    // Parses a value as an integer/number; a malformed value is a UsageError naming the option.
    std::optional<long long> integer(const std::string& name) const;
    std::optional<double> number(const std::string& name) const;
    void expectPositionals(std::size_t count) const;

private:
    std::vector<std::string> positionals_;
    std::map<std::string, std::string> values_;
    std::set<std::string> flags_;
};

}  // namespace attnscope::cli
