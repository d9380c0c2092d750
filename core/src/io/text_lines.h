// Line-oriented text files (merges.txt, vocab.txt): read whole, one string per line.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace attnscope {

// The file's lines without their "\n" or "\r\n" ending; a final line without an ending counts.
// Throws attnscope::Error "FILE: cannot be read" when the file cannot be opened.
std::vector<std::string> readTextLines(const std::filesystem::path& file);

}  // namespace attnscope
