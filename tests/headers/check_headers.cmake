# cmake -DCXX=<compiler> -DINCLUDE=<repo>/include -DWORK=<dir> -P check_headers.cmake
# What a user compiling against the source tree sees (ctest public_headers):
# with -std=c++20 and nothing but -I include, <holdfast/holdfast.hpp> compiles
# (version.hpp is a plain header there); with -std=c++17 the first error says
# holdfast needs C++20 instead of failing deep inside a header.
file(MAKE_DIRECTORY "${WORK}")
set(source "${WORK}/user.cpp")
file(WRITE "${source}" "#include <holdfast/holdfast.hpp>\nint main() { return holdfast::version[0] == 0; }\n")

function(compile standard)
  execute_process(COMMAND "${CXX}" -std=${standard} -fsyntax-only -I "${INCLUDE}" "${source}"
                  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(status ${status} PARENT_SCOPE)
  set(output "${out}${err}" PARENT_SCOPE)
endfunction()

compile(c++20)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "-std=c++20 -I include alone does not compile <holdfast/holdfast.hpp>:\n${output}")
endif()

compile(c++17)
if(status EQUAL 0)
  message(FATAL_ERROR "-std=c++17 compiled <holdfast/holdfast.hpp>: the C++20 check is missing")
endif()
string(REGEX MATCH "[^\n]*: error:[^\n]*" first_error "${output}")
if(NOT first_error MATCHES "holdfast needs C\\+\\+20")
  message(FATAL_ERROR "with -std=c++17 the first error is not holdfast's C++20 message but:\n${first_error}\n\n${output}")
endif()
message(STATUS "c++20: compiles with -I include alone; c++17: ${first_error}")
