# holdfast_embed_scripts(<lua files> <output dir> <namespace>)
# Writes holdfast_scripts.hpp/.cpp in holdfast::<namespace> (a program's own
# scripts must not clash with the library's): one `Script` per file, named <folder>_<file>
# (src/lock/acquire.lua -> lock_acquire), holding the body and its SHA1 so the
# transport can call EVALSHA without loading first, and `all`, every one of them
# (trusted twins included: see below).
function(holdfast_embed_scripts files outdir namespace)
  # Editing a script re-runs this at the next build.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${files})
  set(decls "")
  set(defs "")
  set(refs "")
  list(LENGTH files count)
  foreach(file IN LISTS files)
    get_filename_component(stem ${file} NAME_WE)
    get_filename_component(dir ${file} DIRECTORY)
    get_filename_component(folder ${dir} NAME)
    set(name "${folder}_${stem}")
    file(READ ${file} body)
    # A line `-- include: <file>` is replaced by that file, named from the
    # script's folder: a fragment several scripts share (src/fair_lock/dead_heads.lua.part,
    # ../lock/partial_release.lua.part). Fragments include nothing themselves.
    string(REGEX MATCHALL "-- include: [^\n]+\n" includes "${body}")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "-- include: ([^\n]+)\n" "\\1" part "${line}")
      file(READ ${dir}/${part} fragment)
      string(REPLACE "${line}" "${fragment}" body "${body}")
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${dir}/${part})
    endforeach()
    # A script checking the release's rights (primitive/release_rights.lua.part)
    # has a trusted twin without those checks, for a user allowed everything.
    # The twin still checks each call it makes after its first write or
    # publish (primitive/checked_calls.lua.part), so a user whose rights were
    # narrowed since the client last asked is refused before anything changes,
    # and the transport sends the checked script instead, which names what is missing.
    set(trusted "nullptr")
    string(FIND "${body}" "local checks_rights = true" checks)
    if(NOT checks EQUAL -1)
      file(READ ${PROJECT_SOURCE_DIR}/src/primitive/release_rights.lua.part checked)
      file(READ ${PROJECT_SOURCE_DIR}/src/primitive/release_rights.trusted.lua.part unchecked)
      string(REPLACE "${checked}" "${unchecked}" trusted_body "${body}")
      string(SHA1 trusted_sha "${trusted_body}")
      string(APPEND decls "extern const detail::Script ${name}_trusted;\n")
      string(APPEND defs "const detail::Script ${name}_trusted{\"${name}_trusted\", R\"holdfast_lua(${trusted_body})holdfast_lua\", \"${trusted_sha}\"};\n")
      string(APPEND refs "&${name}_trusted, ")
      math(EXPR count "${count} + 1")
      set(trusted "&${name}_trusted")
    endif()
    string(SHA1 sha "${body}")
    string(APPEND decls "extern const detail::Script ${name};\n")
    string(APPEND defs "const detail::Script ${name}{\"${name}\", R\"holdfast_lua(${body})holdfast_lua\", \"${sha}\", ${trusted}};\n")
    string(APPEND refs "&${name}, ")
  endforeach()
  string(APPEND decls "extern const std::array<const detail::Script*, ${count}> all;\n")
  string(APPEND defs "const std::array<const detail::Script*, ${count}> all{${refs}};\n")
  set(header "// Generated from src/**/*.lua by cmake/EmbedScripts.cmake. Do not edit.\n#pragma once\n#include <array>\n#include \"transport/script.hpp\"\n\nnamespace holdfast::${namespace} {\n${decls}}\n")
  set(source "// Generated from src/**/*.lua by cmake/EmbedScripts.cmake. Do not edit.\n#include \"holdfast_scripts.hpp\"\n\nnamespace holdfast::${namespace} {\n${defs}}\n")
  file(CONFIGURE OUTPUT ${outdir}/holdfast_scripts.hpp CONTENT "${header}" @ONLY)
  file(CONFIGURE OUTPUT ${outdir}/holdfast_scripts.cpp CONTENT "${source}" @ONLY)
endfunction()
