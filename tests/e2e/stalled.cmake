# A float32 laplace run whose residual stops falling above the tolerance (its
# rounding floor: the plate held at 100 beside f = xy): it stops there rather
# than running to max_iters, exits 1 naming the floor, float64 and a
# tolerance that works, and writes the last iterate and "stalled".
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${GF} run ${CASE} precision=float32 grid.dims=[33,33] laplace.method=sor
                        "boundary.y+={type: dirichlet, value: 100}" "laplace.rhs=x*y"
                        laplace.tolerance=1e-5 laplace.check_every=10 --device cpu --out ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("exit ${rc}\nstderr: ${err}")
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "expected exit 1, got ${rc}")
endif()
if(NOT err MATCHES "sor stopped making progress: the relative residual has not fallen below [0-9.e+-]+ \\(reached at iteration [0-9]+\\) in the [0-9]+ iterations since, short of the tolerance 1e-05\\. This is the rounding floor of float32 on this problem: run it in float64 \\(precision: float64\\), or ask for no less than laplace.tolerance: [0-9.e+-]+; the last iterate is written in")
  message(FATAL_ERROR "stderr does not name the floor and what to do")
endif()
file(READ ${OUT}/timing.json timing)
if(NOT timing MATCHES "\"reason\": \"stalled\"")
  message(FATAL_ERROR "timing.json does not say stalled:\n${timing}")
endif()
string(REGEX MATCH "\"iterations\": ([0-9]+)" m "${timing}")
if(CMAKE_MATCH_1 GREATER 2000)
  message(FATAL_ERROR "ran ${CMAKE_MATCH_1} iterations: far past its floor")
endif()
foreach(f run.json log.csv fields.h5)
  if(NOT EXISTS ${OUT}/${f})
    message(FATAL_ERROR "missing ${OUT}/${f}")
  endif()
endforeach()
