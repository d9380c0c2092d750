// A table with one row per attention head, written as CSV: the columns block, layer and head,
// then the table's own. The `metrics` command's .csv and a corpus run's heads.csv are such
// tables. Cells are text, so each file keeps its number format: numberText() for the metrics
// command (8 significant digits), exactNumberText() for corpus results (the shortest exact text).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace attnscope {

class HeadTable {
public:
    // `columns`: the names that follow block, layer and head.
    explicit HeadTable(std::vector<std::string> columns);

    // Appends the row of head `head` in layer `layer` of block `block`; `cells` holds one text per
    // column (empty: no value). Throws attnscope::Error when the count differs from columns().
    void addRow(const std::string& block, int layer, int head, std::vector<std::string> cells);

    const std::vector<std::string>& columns() const { return columns_; }

    // The header line, then one line per row in the order added, each ended by "\n". Cells are
    // written as given, unquoted (block names and numbers hold no commas).
    std::string csv() const;
    // csv() written whole or not at all (atomic_file.h); throws attnscope::Error naming the file.
    void write(const std::filesystem::path& file) const;

private:
    std::vector<std::string> columns_;
    std::string body_;  // the rows' lines
};

// `v` with `digits` significant digits, as printf's %g writes it (0.12345678, 1e-09, inf).
std::string numberText(double v, int digits);
// The shortest text of 15 to 17 significant digits that reads back to the same double.
std::string exactNumberText(double v);

}  // namespace attnscope
