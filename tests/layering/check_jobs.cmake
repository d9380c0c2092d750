# Checks that only ui/services runs background work (issue 29: services own every job): no file
# of the other ui folders starts a thread or a pool job or keeps a JobTracker; they ask a service.
# Run as
#   cmake -DROOT=<ui folder> "-DFOLDERS=a;b;c" -P check_jobs.cmake
# It prints every line that breaks the rule and fails when there is one.
cmake_minimum_required(VERSION 3.21)
if(NOT ROOT OR NOT FOLDERS)
  message(FATAL_ERROR "usage: cmake -DROOT=<folder> \"-DFOLDERS=a;b;c\" -P check_jobs.cmake")
endif()
set(pattern "std::thread|std::jthread|std::async|JobTracker|QThreadPool|QtConcurrent|QThread::create")
set(broken 0)
set(nfiles 0)
foreach(folder IN LISTS FOLDERS)
  file(GLOB_RECURSE files LIST_DIRECTORIES false "${ROOT}/${folder}/*.h" "${ROOT}/${folder}/*.cpp")
  foreach(file IN LISTS files)
    math(EXPR nfiles "${nfiles} + 1")
    file(RELATIVE_PATH rel "${ROOT}" "${file}")
    file(STRINGS "${file}" lines REGEX "${pattern}")
    foreach(line IN LISTS lines)
      string(REGEX MATCH "${pattern}" what "${line}")
      message("${rel}: ${what}: background work belongs in services/")
      math(EXPR broken "${broken} + 1")
    endforeach()
  endforeach()
endforeach()
if(broken GREATER 0)
  message(FATAL_ERROR "${broken} line(s) run jobs outside services/ (${nfiles} files checked)")
endif()
message("only services/ runs jobs: ${nfiles} files of ${FOLDERS} checked")
