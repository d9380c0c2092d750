// A small command-line parser for attnscope-cli: one command, positionals, --key value options
// and --flags. The rule for exit codes (README): the shape of the command line (an unknown
// command or option, a missing, repeated or valueless option, an option without the one it
// needs) is a UsageError, exit 1 with a hint; a value that is malformed or out of range, like any
// other invalid input, is an attnscope::Error, exit 2 with one line naming the option.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnscope::cli {

constexpr long long kMaxInt = 2147483647;            // counts and indices end up in int
constexpr long long kMaxSeed = 9223372036854775807;  // seeds are any value >= 0

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
    // Parses a value as a whole number in [min, max] (nothing when absent); a malformed value, one
    // outside long long or outside the range throws attnscope::Error naming the option and range.
    std::optional<long long> integer(const std::string& name, long long min, long long max) const;
    // Parses a value as a finite number; a malformed or infinite value throws attnscope::Error.
    std::optional<double> number(const std::string& name) const;
    void expectPositionals(std::size_t count) const;

private:
    std::vector<std::string> positionals_;
    std::map<std::string, std::string> values_;
    std::set<std::string> flags_;
};

}  // namespace attnscope::cli
