#include "json_stream.h"

#include "attnscope/attention/trace.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace attnscope::cli {

namespace {
constexpr std::size_t kFlushBytes = 1 << 20;
}

void appendFloatJson(std::string& out, float v) {
    if (!std::isfinite(v)) {
        out += "null";
        return;
    }
    char text[32];
    const std::to_chars_result r = std::to_chars(text, text + sizeof text, v);
    const std::size_t length = static_cast<std::size_t>(r.ptr - text);
    out.append(text, length);
    if (!std::memchr(text, '.', length) && !std::memchr(text, 'e', length)) out += ".0";
}

JsonFileWriter::JsonFileWriter(const std::filesystem::path& path) : file_(path) { buffer_.reserve(2 * kFlushBytes); }

void JsonFileWriter::flushIfFull() {
    if (buffer_.size() < kFlushBytes) return;
    file_.write(buffer_);
    buffer_.clear();
}

void JsonFileWriter::raw(std::string_view text) {
    buffer_ += text;
    flushIfFull();
}

void JsonFileWriter::value(const nlohmann::json& value, int depth) {
    const std::string text = value.dump(1);
    const std::string indent = "\n" + std::string(static_cast<std::size_t>(depth), ' ');
    for (std::size_t at = 0;;) {
        const std::size_t line = text.find('\n', at);
        buffer_.append(text, at, line == std::string::npos ? std::string::npos : line - at);
        if (line == std::string::npos) break;
        buffer_ += indent;
        at = line + 1;
    }
    flushIfFull();
}

void JsonFileWriter::floatMatrix(const HeadMap& m, int depth) {
    const std::string indent(static_cast<std::size_t>(depth), ' ');
    buffer_ += "[";
    for (int i = 0; i < m.rows; ++i) {
        buffer_ += i == 0 ? "\n" : ",\n";
        buffer_ += indent;
        buffer_ += " [";
        const float* row = m.values.data() + static_cast<std::size_t>(i) * static_cast<std::size_t>(m.cols);
        // A row's trailing +0.0s (a causal map's upper triangle, half of a rollout's values) as
        // one copy of ",0.0" repeated: what appendFloatJson writes for each, 0.3 s less of a
        // 4,096-token rollout's 0.7 s of formatting.
        int end = m.cols;
        while (end > 0 && row[end - 1] == 0.0f && !std::signbit(row[end - 1])) --end;
        for (int j = 0; j < end; ++j) {
            if (j) buffer_ += ',';
            appendFloatJson(buffer_, row[j]);
        }
        if (end < m.cols) {
            const std::size_t zeros = static_cast<std::size_t>(m.cols - end);
            if (zeros_.size() < 4 * zeros) {
                zeros_.clear();
                for (int j = 0; j < m.cols; ++j) zeros_ += ",0.0";
            }
            // The first of them opens the row without a comma.
            if (end == 0)
                buffer_.append(zeros_, 1, 4 * zeros - 1);
            else
                buffer_.append(zeros_, 0, 4 * zeros);
        }
        buffer_ += "]";
        flushIfFull();
    }
    buffer_ += "\n" + indent + "]";
}

void JsonFileWriter::commit() {
    file_.write(buffer_);
    buffer_.clear();
    file_.commit();
}

}  // namespace attnscope::cli
