#include "attnscope/io/head_table.h"

#include "attnscope/io/atomic_file.h"
#include "attnscope/runtime/error.h"

#include <cstdio>
#include <cstdlib>

namespace attnscope {

HeadTable::HeadTable(std::vector<std::string> columns) : columns_(std::move(columns)) {}

void HeadTable::addRow(const std::string& block, int layer, int head, std::vector<std::string> cells) {
    if (cells.size() != columns_.size())
        throw Error("head table: the row of " + block + ":" + std::to_string(layer) + ":" + std::to_string(head) +
                    " has " + std::to_string(cells.size()) + " cells for " + std::to_string(columns_.size()) +
                    " columns");
    body_ += block + "," + std::to_string(layer) + "," + std::to_string(head);
    for (const std::string& cell : cells) body_ += "," + cell;
    body_ += "\n";
}

std::string HeadTable::csv() const {
    std::string header = "block,layer,head";
    for (const std::string& c : columns_) header += "," + c;
    return header + "\n" + body_;
}

void HeadTable::write(const std::filesystem::path& file) const { writeFileAtomically(file, csv()); }

std::string numberText(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
}

std::string exactNumberText(double v) {
    char buf[40];
    for (int p = 15; p <= 17; ++p) {
        std::snprintf(buf, sizeof buf, "%.*g", p, v);
        if (std::strtod(buf, nullptr) == v) break;
    }
    return buf;
}

}  // namespace attnscope
