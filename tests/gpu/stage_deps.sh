#!/usr/bin/env bash
# Copies what a GPU machine may lack to build core from this Debian machine into .gpu-deps/
# (git-ignored), laid out as a prefix that tests/gpu/run.sh puts on CMAKE_PREFIX_PATH,
# PKG_CONFIG_PATH and LD_LIBRARY_PATH (carry .gpu-deps along with the working tree):
#   - header-only: nlohmann-json, Catch2 v2 (with their CMake packages);
#   - the tokenizers' libraries: PCRE2, utf8proc, SentencePiece (headers, shared libraries and
#     pkg-config files whose prefix is the .pc file's own folder, so the copy works anywhere);
#   - pkgconf, for a machine without pkg-config (run.sh uses it only there).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
deps=$root/.gpu-deps
multiarch=/usr/lib/x86_64-linux-gnu
rm -rf "$deps"
mkdir -p "$deps/include" "$deps/share/cmake" "$deps/lib/cmake" "$deps/lib/pkgconfig" "$deps/bin"
cp -r /usr/include/nlohmann "$deps/include/"
cp -r /usr/share/cmake/nlohmann_json "$deps/share/cmake/"
cp -r /usr/include/catch2 "$deps/include/"
cp -r /usr/lib/cmake/Catch2 "$deps/lib/cmake/"
# Catch2's exported targets name this library; the tests never link it (they have their own main).
cp /usr/lib/libCatch2WithMain.a "$deps/lib/" 2>/dev/null || : >"$deps/lib/libCatch2WithMain.a"

cp /usr/include/pcre2.h /usr/include/utf8proc.h /usr/include/sentencepiece_processor.h "$deps/include/"
for lib in libpcre2-8.so libutf8proc.so libsentencepiece.so libsentencepiece_train.so libpkgconf.so; do
  cp -P "$multiarch/$lib"* "$deps/lib/"  # the .so link, its soname link and the file
done
rm -f "$deps/lib/libpcre2-8.a" "$deps/lib/libutf8proc.a"  # shared libraries only
for pc in libpcre2-8 libutf8proc sentencepiece; do
  sed -e 's|^prefix=.*|prefix=${pcfiledir}/../..|' -e 's|^libdir=.*|libdir=${prefix}/lib|' \
    "$multiarch/pkgconfig/$pc.pc" >"$deps/lib/pkgconfig/$pc.pc"
done
cp /usr/bin/pkgconf "$deps/bin/"
cat >"$deps/bin/pkg-config" <<'EOF'
#!/bin/sh
d=$(cd "$(dirname "$0")/.." && pwd)
LD_LIBRARY_PATH="$d/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$d/bin/pkgconf" "$@"
EOF
chmod +x "$deps/bin/pkg-config"
PKG_CONFIG_PATH=$deps/lib/pkgconfig "$deps/bin/pkg-config" --cflags --libs libpcre2-8 libutf8proc sentencepiece
du -sh "$deps"
