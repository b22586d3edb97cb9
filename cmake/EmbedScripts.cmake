# holdfast_embed_scripts(<lua files> <output dir>)
# Writes holdfast_scripts.hpp/.cpp: one `Script` per file, named <folder>_<file>
# (src/lock/acquire.lua -> lock_acquire), holding the body and its SHA1 so the
# transport can call EVALSHA without loading first.
function(holdfast_embed_scripts files outdir)
  # Editing a script re-runs this at the next build.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${files})
  set(decls "")
  set(defs "")
  foreach(file IN LISTS files)
    get_filename_component(stem ${file} NAME_WE)
    get_filename_component(dir ${file} DIRECTORY)
    get_filename_component(folder ${dir} NAME)
    set(name "${folder}_${stem}")
    file(READ ${file} body)
    string(SHA1 sha "${body}")
    string(APPEND decls "extern const Script ${name};\n")
    string(APPEND defs "const Script ${name}{\"${name}\", R\"holdfast_lua(${body})holdfast_lua\", \"${sha}\"};\n")
  endforeach()
  set(header "// Generated from src/**/*.lua by cmake/EmbedScripts.cmake. Do not edit.\n#pragma once\n#include \"transport/script.hpp\"\n\nnamespace holdfast::scripts {\n${decls}}\n")
  set(source "// Generated from src/**/*.lua by cmake/EmbedScripts.cmake. Do not edit.\n#include \"holdfast_scripts.hpp\"\n\nnamespace holdfast::scripts {\n${defs}}\n")
  file(CONFIGURE OUTPUT ${outdir}/holdfast_scripts.hpp CONTENT "${header}" @ONLY)
  file(CONFIGURE OUTPUT ${outdir}/holdfast_scripts.cpp CONTENT "${source}" @ONLY)
endfunction()
