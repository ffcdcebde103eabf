# --dry-run prints the resolved case, the device, memory and the stability
# limit, and writes nothing.
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${GF} run ${CASE} --dry-run --device cpu --out ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "exit ${rc}: ${err}")
endif()
foreach(want "workload: heat" "# device: cpu" "# memory: needs .* free" "stability limit dt_max")
  if(NOT out MATCHES "${want}")
    message(FATAL_ERROR "--dry-run output lacks '${want}':\n${out}")
  endif()
endforeach()
if(EXISTS ${OUT})
  message(FATAL_ERROR "--dry-run created ${OUT}")
endif()
