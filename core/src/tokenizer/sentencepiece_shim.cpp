// libattnscope_sentencepiece.so: libsentencepiece behind a C interface (sentencepiece_shim.h says
// why). Nothing here may throw past the interface.
#include "sentencepiece_shim.h"

#include <sentencepiece_processor.h>

#include <string>
#include <vector>

namespace {

void send(attnscope_spm_sink sink, void* context, const std::string& s) {
    if (sink) sink(context, s.data(), s.size());
}

const sentencepiece::SentencePieceProcessor& sp(const void* model) {
    return *static_cast<const sentencepiece::SentencePieceProcessor*>(model);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void* attnscope_spm_load(const char* data, std::size_t size,
                                                                attnscope_spm_sink error, void* errorContext) {
    try {
        auto model = std::make_unique<sentencepiece::SentencePieceProcessor>();
        const auto status = model->LoadFromSerializedProto(std::string(data, size));
        if (!status.ok()) {
            send(error, errorContext, status.ToString());
            return nullptr;
        }
        return model.release();
    } catch (const std::exception& e) {
        send(error, errorContext, e.what());
    } catch (...) {
        send(error, errorContext, "unknown failure");
    }
    return nullptr;
}

__attribute__((visibility("default"))) void attnscope_spm_free(void* model) {
    delete static_cast<sentencepiece::SentencePieceProcessor*>(model);
}

__attribute__((visibility("default"))) int attnscope_spm_size(const void* model) { return sp(model).GetPieceSize(); }

__attribute__((visibility("default"))) int attnscope_spm_unk_id(const void* model) { return sp(model).unk_id(); }

__attribute__((visibility("default"))) int attnscope_spm_piece(const void* model, int id, attnscope_spm_sink sink,
                                                               void* context) {
    const auto& p = sp(model);
    if (id < 0 || id >= p.GetPieceSize()) return -1;
    try {
        send(sink, context, p.IdToPiece(id));
    } catch (...) {
        return -1;
    }
    return (p.IsControl(id) ? kAttnscopeSpmControl : 0) | (p.IsUnknown(id) ? kAttnscopeSpmUnknown : 0) |
           (p.IsUnused(id) ? kAttnscopeSpmUnused : 0) | (p.IsByte(id) ? kAttnscopeSpmByte : 0);
}

__attribute__((visibility("default"))) int attnscope_spm_encode(const void* model, const char* text, std::size_t size,
                                                                attnscope_spm_sink sink, void* context,
                                                                attnscope_spm_sink error, void* errorContext) {
    try {
        sentencepiece::ImmutableSentencePieceText spt;
        const auto status = sp(model).Encode(std::string(text, size), spt.mutable_proto());
        if (!status.ok()) {
            send(error, errorContext, status.ToString());
            return -1;
        }
        std::vector<AttnscopeSpmPiece> out;
        out.reserve(spt.pieces_size());
        for (const auto& p : spt.pieces()) out.push_back({static_cast<std::int32_t>(p.id()), p.begin(), p.end()});
        sink(context, reinterpret_cast<const char*>(out.data()), out.size() * sizeof(AttnscopeSpmPiece));
        return 0;
    } catch (const std::exception& e) {
        send(error, errorContext, e.what());
    } catch (...) {
        send(error, errorContext, "unknown failure");
    }
    return -1;
}

__attribute__((visibility("default"))) int attnscope_spm_decode(const void* model, const std::int32_t* ids,
                                                                std::size_t count, attnscope_spm_sink sink,
                                                                void* context) {
    try {
        std::string text;
        if (!sp(model).Decode(std::vector<int>(ids, ids + count), &text).ok()) return -1;
        send(sink, context, text);
        return 0;
    } catch (...) {
        return -1;
    }
}
}
