// The project's own CSV outputs read back (monitors.csv, kinds.csv, scaling.csv, ...): a header
// row of names, then rows of comma-separated fields without quoting (the writers never put a
// comma, quote or newline inside a field). For the GUI's curves and the tests.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace attnscope {

class CsvTable {
public:
    // Reads the file (the input rule: a regular file, at most 256 MiB); throws attnscope::Error
    // "FILE: ..." when it is missing, empty, or a row's field count differs from the header's
    // (naming the line).
    static CsvTable read(const std::filesystem::path& file);

    const std::vector<std::string>& header() const { return header_; }
    std::size_t rows() const { return rows_.size(); }
    // Column index of `name`; throws attnscope::Error "FILE: no column 'name'".
    std::size_t column(const std::string& name) const;
    const std::string& text(std::size_t row, const std::string& name) const;
    // The field as a number; throws attnscope::Error naming the file, line and column.
    double number(std::size_t row, const std::string& name) const;

private:
    std::filesystem::path file_;
    std::vector<std::string> header_;
    std::vector<std::vector<std::string>> rows_;
};

}  // namespace attnscope
