# cmake -DHOLDFAST=<holdfast> -DHELP2MAN=<help2man> -DOUT=<holdfast.1> -P ManPage.cmake
# The man page is the tool's own help: help2man reads `holdfast --help` and
# `--version`, and each subcommand's --help goes in as a COMMANDS section, so
# the page lists every option and cannot drift from the program.
get_filename_component(dir "${OUT}" DIRECTORY)
set(include "${dir}/holdfast-man.include")
file(WRITE "${include}" "[COMMANDS]\n")
foreach(command run status list unlock)
  execute_process(COMMAND "${HOLDFAST}" ${command} --help OUTPUT_VARIABLE help RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "holdfast ${command} --help failed (${status})")
  endif()
  # roff: backslashes doubled, and a line starting with . or ' escaped.
  string(REPLACE "\\" "\\e" help "${help}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
  file(APPEND "${include}" ".SS \"holdfast ${command}\"\n.nf\n${help}.fi\n")
endforeach()
execute_process(COMMAND "${HELP2MAN}" --no-info --section=1
                        "--name=distributed locks on Redis, compatible with Redisson"
                        "--include=${include}" "--output=${OUT}" "${HOLDFAST}"
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "help2man failed (${status})")
endif()
