#include "attnscope/io/csv_table.h"

#include "attnscope/io/input_file.h"
#include "attnscope/runtime/error.h"

#include <cstdlib>
#include <sstream>

namespace attnscope {

namespace {

std::vector<std::string> fields(const std::string& line) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = line.find(',', start);
        out.push_back(line.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) return out;
        start = comma + 1;
    }
}

}  // namespace

CsvTable CsvTable::read(const std::filesystem::path& file) {
    CsvTable t;
    t.file_ = file;
    std::istringstream in(readInputFile(file, 256ull << 20, "CSV file"));
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        std::vector<std::string> row = fields(line);
        if (t.header_.empty()) {
            t.header_ = std::move(row);
            continue;
        }
        if (row.size() != t.header_.size())
            throw Error(file.string() + ": line " + std::to_string(number) + " has " + std::to_string(row.size()) +
                        " fields, the header " + std::to_string(t.header_.size()));
        t.rows_.push_back(std::move(row));
    }
    if (t.header_.empty()) throw Error(file.string() + ": empty (expected a header row)");
    return t;
}

std::size_t CsvTable::column(const std::string& name) const {
    for (std::size_t i = 0; i < header_.size(); ++i)
        if (header_[i] == name) return i;
    throw Error(file_.string() + ": no column '" + name + "'");
}

const std::string& CsvTable::text(std::size_t row, const std::string& name) const {
    return rows_.at(row)[column(name)];
}

double CsvTable::number(std::size_t row, const std::string& name) const {
    const std::string& s = text(row, name);
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size())
        throw Error(file_.string() + ": row " + std::to_string(row + 1) + ", column '" + name + "': '" + s +
                    "' is not a number");
    return v;
}

}  // namespace attnscope
