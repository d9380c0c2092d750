# attnscope-devtools (tools/README.md): screenshots, timings and a fixture writer that drive the
# real window through the ui tests' fixtures. Built with the tests so it keeps compiling; ctest
# never runs it. Included from tests/ui/CMakeLists.txt rather than added as a directory of its
# own: Qt6::Test defines QT_TESTCASE_BUILDDIR as the target's build folder, and the shared
# precompiled header is only used by targets of the folder it was built in.
add_executable(attnscope-devtools
  ${CMAKE_CURRENT_LIST_DIR}/main.cpp
  ${CMAKE_CURRENT_LIST_DIR}/window_screenshots.cpp
  ${CMAKE_CURRENT_LIST_DIR}/views_screenshots.cpp
  ${CMAKE_CURRENT_LIST_DIR}/lab_screenshots.cpp
  ${CMAKE_CURRENT_LIST_DIR}/causal_screenshots.cpp
  ${CMAKE_CURRENT_LIST_DIR}/timings.cpp
  ${CMAKE_CURRENT_LIST_DIR}/write_family_fixtures.cpp
  ${CMAKE_CURRENT_LIST_DIR}/source_screenshots.cpp
  ${CMAKE_CURRENT_LIST_DIR}/kinds_screenshots.cpp
  ${CMAKE_CURRENT_LIST_DIR}/long_screenshots.cpp
  ${CMAKE_CURRENT_LIST_DIR}/layout_screenshots.cpp
  ${CMAKE_CURRENT_LIST_DIR}/family_screenshots.cpp
  ${CMAKE_CURRENT_LIST_DIR}/swin_screenshots.cpp
  ${CMAKE_CURRENT_LIST_DIR}/clip_screenshots.cpp
)
target_link_libraries(attnscope-devtools PRIVATE attnscope_ui_test_fixtures)
attnscope_ui_test_target(attnscope-devtools)
set_target_properties(attnscope-devtools PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tools)
