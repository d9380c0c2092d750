// The C interface of libattnscope_sentencepiece.so, the one place libsentencepiece is linked.
//
// Why a separate library: Debian's libsentencepiece 0.1.97 carries its own protobuf 3.14 and
// exports its symbols, while LibTorch loads libprotobuf 3.21. In one symbol scope the two
// collide (measured: a crash in libprotobuf's static initializers when libsentencepiece comes
// first, protobuf's version check aborting when libprotobuf comes first). So core loads this
// library with dlmopen into a link-map namespace of its own (sentencepiece_model.cpp) and talks
// to it in plain C: results are handed to a sink callback that copies them, so no memory,
// exception or C++ object crosses between the two copies of the C++ runtime.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

// Receives `size` bytes that stay valid only during the call.
typedef void (*attnscope_spm_sink)(void* context, const char* data, std::size_t size);

enum { kAttnscopeSpmControl = 1, kAttnscopeSpmUnknown = 2, kAttnscopeSpmUnused = 4, kAttnscopeSpmByte = 8 };

// One encoded piece as attnscope_spm_encode writes it (native byte order).
struct AttnscopeSpmPiece {
    std::int32_t id;
    std::uint32_t begin, end;  // byte offsets into the input text
};

// A model from its file's bytes; nullptr with the library's message sent to `error`.
void* attnscope_spm_load(const char* data, std::size_t size, attnscope_spm_sink error, void* errorContext);
void attnscope_spm_free(void* model);
int attnscope_spm_size(const void* model);
int attnscope_spm_unk_id(const void* model);
// Sends piece `id`'s text to `sink` and returns its kAttnscopeSpm* flags (-1 for a bad id).
int attnscope_spm_piece(const void* model, int id, attnscope_spm_sink sink, void* context);
// Sends the AttnscopeSpmPiece records of `text` to `sink` in one call; 0 on success, else -1
// with the message sent to `error`.
int attnscope_spm_encode(const void* model, const char* text, std::size_t size, attnscope_spm_sink sink, void* context,
                         attnscope_spm_sink error, void* errorContext);
// Sends the text of SentencePiece ids to `sink`; 0 on success.
int attnscope_spm_decode(const void* model, const std::int32_t* ids, std::size_t count, attnscope_spm_sink sink,
                         void* context);
}
