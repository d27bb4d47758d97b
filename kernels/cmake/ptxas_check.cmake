# cmake -DPTXAS=... -DARCH=sm_90 -DPTX=in.ptx -DCUBIN=out.cubin -DLOG=out.log -DALLOW_SPILLS=OFF -P ptxas_check.cmake
# Assembles PTX into a cubin with `ptxas -v`, keeps the resource report (registers, spills) in LOG, and fails
# when any entry point spills registers or uses a stack frame (unless ALLOW_SPILLS).
execute_process(
  COMMAND "${PTXAS}" -arch=${ARCH} -v "${PTX}" -o "${CUBIN}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
file(WRITE "${LOG}" "${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ptxas failed for ${PTX}:\n${out}${err}")
endif()
string(REGEX MATCHALL "[0-9]+ bytes spill stores, [0-9]+ bytes spill loads" spills "${err}")
set(bad "")
foreach(line IN LISTS spills)
  if(NOT line MATCHES "^0 bytes spill stores, 0 bytes spill loads$")
    set(bad "${bad}\n  ${line}")
  endif()
endforeach()
if(bad)
  if(ALLOW_SPILLS)
    message(WARNING "ptxas reports register spills for ${ARCH} (see ${LOG}):${bad}")
  else()
    message(FATAL_ERROR "ptxas reports register spills for ${ARCH} (see ${LOG}):${bad}\n"
                        "(configure with -DCUIR_KERNELS_ALLOW_SPILLS=ON to build anyway)")
  endif()
endif()
