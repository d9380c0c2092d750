// A CSV file as rows of cells, for tests that check what the program wrote. Plain comma-separated
// cells without quoting (what AttnScope's own CSV writers produce); a line ending in a comma has
// an empty last cell.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace attnscope::testing {

inline std::vector<std::vector<std::string>> readCsv(const std::filesystem::path& file) {
    std::ifstream in(file);
    std::vector<std::vector<std::string>> rows;
    std::string line;
    while (std::getline(in, line)) {
        std::vector<std::string> cells;
        std::stringstream s(line);
        std::string cell;
        while (std::getline(s, cell, ',')) cells.push_back(cell);
        if (!line.empty() && line.back() == ',') cells.push_back("");
        rows.push_back(cells);
    }
    return rows;
}

}  // namespace attnscope::testing
