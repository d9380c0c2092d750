#include "io/text_lines.h"

#include "attnscope/io/input_file.h"

namespace attnscope {

std::vector<std::string> readTextLines(const std::filesystem::path& file) {
    const std::string text = readInputFile(file, kMaxTextFileBytes, "text file");
    std::vector<std::string> lines;
    for (std::size_t at = 0; at < text.size();) {
        std::size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(at, end - at);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        lines.push_back(std::move(line));
        at = end + 1;
    }
    return lines;
}

}  // namespace attnscope
