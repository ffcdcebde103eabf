# `gridforge bench --workload poisson` (issue 22) on the CPU at tiny sizes:
# every method in 2D and 3D, both precisions, checked by check_bench.py (the
# solve's keys against each other, bench.csv and the table); a box of three
# sizes whose Jacobi row the time limit ends, marked so; and plot_bench.py on
# the rows (when PLOT is given).
# Inputs (-D): GF OUT PY CHECK [PLOT]
file(REMOVE_RECURSE ${OUT})
if(NOT PY)
  message(FATAL_ERROR "no Python with numpy and h5py (GF_PYTHON) to check bench.json")
endif()

# solve_run(DIR ROWS ARGS...): gridforge bench --workload poisson ARGS --out DIR,
# its table in DIR/table.txt, checked by check_bench.py for ROWS rows.
function(solve_run dir rows)
  set(args bench --workload poisson ${ARGN} --devices cpu --out ${dir})
  execute_process(COMMAND ${GF} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE table ERROR_VARIABLE err)
  message("gridforge ${args}\nexit ${rc}\nstdout:\n${table}\nstderr:\n${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gridforge bench exited ${rc}")
  endif()
  file(WRITE ${dir}/table.txt "${table}")
  execute_process(COMMAND ${PY} ${CHECK} ${dir} --rows ${rows} --steps 1 --repetitions 1
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "check_bench.py failed on ${dir}")
  endif()
  set(table "${table}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

# 9 methods in float64, 8 in float32 (multigrid-mixed is float64 only), 2 dims
solve_run(${OUT} 34 --dims 2,3 --sizes 17 --precision float32,float64)
foreach(m jacobi sor cg cg-jacobi cg-multigrid multigrid multigrid-f multigrid-mixed)
  if(NOT table MATCHES "\npoisson/${m} +3 +17\\^3 +cpu +float64 +[0-9]+ +[^\n]+ yes +[0-9]")
    message(FATAL_ERROR "poisson/${m} did not converge on 17^3 in float64")
  endif()
endforeach()
if(NOT table MATCHES "\npoisson/fft +2 +17\\^2 +cpu +float64 +1 [^\n]+ yes \\(direct\\)")
  message(FATAL_ERROR "the fft row is not a direct solve")
endif()
if(table MATCHES "poisson/multigrid-mixed[^\n]+float32")
  message(FATAL_ERROR "a multigrid-mixed row in float32")
endif()

# The time limit: Jacobi on 65x47x33 needs thousands of sweeps, 0.2 s is not
# enough. (Rows that converge within their limit are the run above; no row
# here is asked to finish within a time, which a slow or loaded machine, or
# the sanitizer build, would miss: multigrid did, once, under ASan.)
solve_run(${OUT}/limit 1 --methods jacobi --sizes 65x47x33 --precision float64
          --max-seconds 0.2)
# A row's setup lines once: the throwaway solver that warms the pages logs nothing.
string(REGEX MATCHALL "laplace: [0-9]+ Jacobi sweeps? per pass" passes "${err}")
list(LENGTH passes npasses)
if(NOT npasses EQUAL 1)
  message(FATAL_ERROR "the Jacobi row logged its time_block choice ${npasses} times, not once")
endif()
if(NOT table MATCHES "\npoisson/jacobi +3 +65x47x33 +cpu +float64 +[0-9]+ [^\n]+ no \\(time_limit\\) ")
  message(FATAL_ERROR "the Jacobi row is not marked as stopped by the time limit")
endif()
file(READ ${OUT}/limit/bench.json json)
string(JSON reason GET "${json}" rows 0 reason)
string(JSON converged GET "${json}" rows 0 converged)
string(JSON seconds GET "${json}" rows 0 time_to_solution_s)
if(NOT reason STREQUAL "time_limit" OR NOT converged STREQUAL "OFF" OR seconds GREATER 5)
  message(FATAL_ERROR "the Jacobi row: reason ${reason}, converged ${converged}, ${seconds} s")
endif()

if(PLOT)
  execute_process(COMMAND ${PY} ${PLOT} ${OUT}/bench.json --out ${OUT}/plots
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("plot_bench.py: exit ${rc}\n${out}${err}")
  if(NOT rc EQUAL 0 OR NOT EXISTS ${OUT}/plots/bench_poisson.png OR
     NOT EXISTS ${OUT}/plots/bench_poisson_sweep.png OR
     NOT EXISTS ${OUT}/plots/bench_poisson_solve.png)
    message(FATAL_ERROR "plot_bench.py did not plot the poisson rows")
  endif()
endif()
