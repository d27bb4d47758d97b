# cmake -DNM=llvm-nm -DLIB=libx.so -DSYMBOLS=a,b -DSTAMP=out.stamp -P check_exports.cmake
# Fails unless the shared library exports (defines, dynamic symbol table) every symbol in SYMBOLS.
execute_process(COMMAND "${NM}" -D --defined-only "${LIB}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} failed on ${LIB}: ${err}")
endif()
string(REPLACE "," ";" SYMBOLS "${SYMBOLS}")
foreach(sym IN LISTS SYMBOLS)
  if(NOT out MATCHES "[ \t]T ${sym}\n")
    message(FATAL_ERROR "${LIB} does not export ${sym}")
  endif()
endforeach()
file(WRITE "${STAMP}" "${out}")
