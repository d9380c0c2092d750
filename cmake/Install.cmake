# Installing AttnScope like a desktop application (README "Install as a desktop application"):
#   bin/attnscope, bin/attnscope-cli
#   lib/attnscope/libattnscope_sentencepiece.so       (core/CMakeLists.txt; found beside ../lib)
#   share/attnscope/builtin/                          (core/CMakeLists.txt; found as ../share)
#   share/applications/org.attnscope.AttnScope.desktop
#   share/icons/hicolor/scalable/apps/attnscope.svg
#   share/metainfo/org.attnscope.AttnScope.metainfo.xml
#   share/mime/packages/attnscope.xml                 (.npy files: application/x-npy)
#   share/man/man1/attnscope-cli.1.gz                 (made from the CLI's --help texts)
# The binaries find the built-in models and the SentencePiece shim relative to their own path,
# so any prefix works (/usr for the .deb, /usr/local or a DESTDIR for `cmake --install`).
# `cpack` (or `cmake --build build --target package`) makes a Debian package of the same tree.
set(ATTNSCOPE_APP_ID org.attnscope.AttnScope)

install(TARGETS attnscope-cli RUNTIME DESTINATION bin)
if(TARGET attnscope)
  install(TARGETS attnscope RUNTIME DESTINATION bin)
  install(FILES ${PROJECT_SOURCE_DIR}/resources/attnscope.desktop DESTINATION share/applications
          RENAME ${ATTNSCOPE_APP_ID}.desktop)
  install(FILES ${PROJECT_SOURCE_DIR}/resources/attnscope.svg DESTINATION share/icons/hicolor/scalable/apps)
  # .npy as a MIME type, so file managers offer AttnScope for attention files (MimeType= above).
  install(FILES ${PROJECT_SOURCE_DIR}/resources/attnscope-mime.xml DESTINATION share/mime/packages RENAME attnscope.xml)
  configure_file(${PROJECT_SOURCE_DIR}/resources/${ATTNSCOPE_APP_ID}.metainfo.xml
                 ${CMAKE_BINARY_DIR}/${ATTNSCOPE_APP_ID}.metainfo.xml @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/${ATTNSCOPE_APP_ID}.metainfo.xml DESTINATION share/metainfo)
endif()

# The man page is written from the CLI's own --help texts at build time, so it cannot drift
# from them (cmake/make_manpage.cmake).
set(ATTNSCOPE_MANPAGE ${CMAKE_BINARY_DIR}/man/attnscope-cli.1)
add_custom_command(OUTPUT ${ATTNSCOPE_MANPAGE}.gz
  COMMAND ${CMAKE_COMMAND} -DCLI=$<TARGET_FILE:attnscope-cli> -DOUT=${ATTNSCOPE_MANPAGE}
          -DVERSION=${PROJECT_VERSION} -P ${PROJECT_SOURCE_DIR}/cmake/make_manpage.cmake
  DEPENDS attnscope-cli ${PROJECT_SOURCE_DIR}/cmake/make_manpage.cmake
  COMMENT "Writing the attnscope-cli man page from its --help texts")
add_custom_target(attnscope_manpage ALL DEPENDS ${ATTNSCOPE_MANPAGE}.gz)
install(FILES ${ATTNSCOPE_MANPAGE}.gz DESTINATION share/man/man1)

# ---- Debian package (cpack -G DEB) ---------------------------------------------------------
# Dependencies are the Debian 12 packages that hold the libraries the binaries link (objdump -p
# NEEDED, then dpkg -S, docs in README), plus OpenBLAS, which Debian's LibTorch reaches through
# the libblas.so.3 alternative and which makes it ~30x faster than the reference BLAS.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME attnscope)
set(CPACK_PACKAGE_VENDOR "AttnScope")
set(CPACK_PACKAGE_CONTACT "AttnScope maintainers <attnscope@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Explore attention in transformer models (desktop app and CLI)")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "AttnScope opens a transformer model (a Hugging Face folder or a built-in one), runs an input through it offline on LibTorch and shows every head's attention: overview, heat map, metrics, rollout, temperature, dot/additive/linear comparison, head masking and figures. attnscope-cli does the same from scripts.")
set(ATTNSCOPE_DEB_DEPENDS
    "libtorch1.13, libopenblas0-pthread, libsentencepiece0, libpcre2-8-0, libutf8proc2, libstdc++6, libgcc-s1, libc6")
if(ATTNSCOPE_BUILD_UI)  # the CLI links QtGui + QtSvg (figures), the GUI Widgets and QCustomPlot too
  string(APPEND ATTNSCOPE_DEB_DEPENDS ", libqt6core6, libqt6gui6, libqt6svg6, libqt6widgets6, libqcustomplot2.1-qt6")
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${ATTNSCOPE_DEB_DEPENDS}")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "qt6-qpa-plugins")
include(CPack)
