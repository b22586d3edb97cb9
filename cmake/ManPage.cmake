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
# What the help can only mention in passing: the environment, read and set.
file(APPEND "${include}" [=[
[ENVIRONMENT]
.TP
.B HOLDFAST_URL
The Redis URL when there is no \-\-url or \-\-url\-file: unlike \-\-url, a password in it does not show in ps.
.TP
.B REDIS_URL
The Redis URL when neither \-\-url, \-\-url\-file nor HOLDFAST_URL gives one.
.TP
.B HOLDFAST_NAME, HOLDFAST_OWNER, HOLDFAST_TOKEN
Set by holdfast run for its command: the lock's name, the owner id it was taken as (a permit's id for
\-\-semaphore), and, with \-\-fenced, the fencing token.
]=])
execute_process(COMMAND "${HELP2MAN}" --no-info --section=1
                        "--name=distributed locks on Redis, compatible with Redisson"
                        "--include=${include}" "--output=${OUT}" "${HOLDFAST}"
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "help2man failed (${status})")
endif()
