# cmake -DGZIP=<gzip> -DIN=<file> -DOUT=<file.gz> -P Gzip.cmake
# As Debian compresses what it installs: the most, with no name or time in
# the header (gzip -9n), so the same input always gives the same bytes.
execute_process(COMMAND "${GZIP}" -9n -c "${IN}" OUTPUT_FILE "${OUT}" RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "gzip ${IN} failed (${status})")
endif()
