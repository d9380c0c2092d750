# ctest install_tree: installs the build into a temporary root (DESTDIR) and checks it works
# from there: the installed attnscope-cli opens the default built-in model from the installed
# share/attnscope/builtin (proved by removing one installed model, which the installed CLI then
# no longer lists, although the source tree still has it), the man page renders, and the
# .desktop and AppStream files validate where the validators are installed.
# -DBUILD=<build dir> -DROOT=<temporary root> -DPREFIX=/usr
file(REMOVE_RECURSE ${ROOT})
execute_process(COMMAND ${CMAKE_COMMAND} -E env DESTDIR=${ROOT} ${CMAKE_COMMAND} --install ${BUILD} --prefix ${PREFIX}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed:\n${out}")
endif()
set(usr ${ROOT}${PREFIX})
foreach(f bin/attnscope-cli share/attnscope/builtin/reverse-dot/config.json lib/attnscope/libattnscope_sentencepiece.so
          share/man/man1/attnscope-cli.1.gz)
  if(NOT EXISTS ${usr}/${f})
    message(FATAL_ERROR "not installed: ${usr}/${f}")
  endif()
endforeach()

function(run_cli expect)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=ATTNSCOPE_BUILTIN_DIR ${usr}/bin/attnscope-cli ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT "${out}${err}" MATCHES "${expect}")
    message(FATAL_ERROR "installed attnscope-cli ${ARGN}: exit ${rc}, expected '${expect}' in:\n${out}${err}")
  endif()
  set(cli_out "${out}" PARENT_SCOPE)
endfunction()
run_cli("family: +attnscope-seq2seq" info builtin:reverse-dot)
run_cli("wrote .*decoder.npy" attention builtin:reverse-dot --text abc123 --out ${ROOT}/out)
run_cli("reverse-linear" list-builtin)
file(REMOVE_RECURSE ${usr}/share/attnscope/builtin/reverse-linear)
run_cli("reverse-dot" list-builtin)
if(cli_out MATCHES "reverse-linear")
  message(FATAL_ERROR "the installed CLI does not read its installed built-in models:\n${cli_out}")
endif()

find_program(MAN man)
if(MAN)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env MANPAGER=cat MANWIDTH=100 ${MAN} -l ${usr}/share/man/man1/attnscope-cli.1.gz
                  RESULT_VARIABLE rc OUTPUT_VARIABLE page ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT page MATCHES "attnscope-cli attention MODEL" OR NOT page MATCHES "EXIT STATUS")
    message(FATAL_ERROR "man -l attnscope-cli.1.gz: exit ${rc}\n${page}${err}")
  endif()
endif()

if(EXISTS ${usr}/bin/attnscope)
  foreach(f share/applications/org.attnscope.AttnScope.desktop share/icons/hicolor/scalable/apps/attnscope.svg
            share/metainfo/org.attnscope.AttnScope.metainfo.xml share/mime/packages/attnscope.xml)
    if(NOT EXISTS ${usr}/${f})
      message(FATAL_ERROR "not installed: ${usr}/${f}")
    endif()
  endforeach()
  file(READ ${usr}/share/applications/org.attnscope.AttnScope.desktop desktop)
  foreach(key "Type=Application" "Exec=attnscope" "Icon=attnscope" "Name=AttnScope" "Categories=Science;")
    string(FIND "${desktop}" "${key}" at)
    if(at LESS 0)
      message(FATAL_ERROR "the .desktop file lacks ${key}")
    endif()
  endforeach()
  find_program(DESKTOP_VALIDATE desktop-file-validate)
  if(DESKTOP_VALIDATE)
    execute_process(COMMAND ${DESKTOP_VALIDATE} ${usr}/share/applications/org.attnscope.AttnScope.desktop
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(NOT rc EQUAL 0 OR out MATCHES "error")
      message(FATAL_ERROR "desktop-file-validate:\n${out}")
    endif()
  endif()
  find_program(APPSTREAMCLI appstreamcli)
  if(APPSTREAMCLI)
    execute_process(COMMAND ${APPSTREAMCLI} validate --no-net ${usr}/share/metainfo/org.attnscope.AttnScope.metainfo.xml
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "appstreamcli validate:\n${out}")
    endif()
  endif()
endif()
message(STATUS "installed tree in ${ROOT} works")
