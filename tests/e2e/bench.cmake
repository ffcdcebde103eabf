# `gridforge bench` on the CPU at tiny sizes: exit 0, a table on stdout, and
# bench.json + bench.csv that check_bench.py reads against each other and SPEC.
# Then non-cubic sizes (issue 21) mixed with a cube, in 3D and in 2D, into
# ${OUT}/shapes3d and ${OUT}/shapes2d.
# Inputs (-D): GF OUT PY CHECK
file(REMOVE_RECURSE ${OUT})
if(NOT PY)
  message(FATAL_ERROR "no Python with numpy and h5py (GF_PYTHON) to check bench.json")
endif()

# bench_run(DIR ROWS STEPS ARGS...): gridforge bench ARGS --out DIR, its table
# in DIR/table.txt, checked by check_bench.py for ROWS rows of STEPS steps.
function(bench_run dir rows steps)
  set(args bench ${ARGN} --devices cpu --steps ${steps} --repeat 3 --out ${dir})
  execute_process(COMMAND ${GF} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE table ERROR_VARIABLE err)
  message("gridforge ${args}\nexit ${rc}\nstdout:\n${table}\nstderr:\n${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gridforge bench exited ${rc}")
  endif()
  file(WRITE ${dir}/table.txt "${table}")
  execute_process(COMMAND ${PY} ${CHECK} ${dir} --rows ${rows} --steps ${steps} --repetitions 3
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "check_bench.py failed on ${dir}")
  endif()
  set(table "${table}" PARENT_SCOPE)
endfunction()

# 4 workloads (heat, laplace, stencil, wave) x 2 dims x 2 precisions x 2 sizes x 1 device
bench_run(${OUT} 32 3 --workload all --dims 2,3 --sizes 16,32 --precision float32,float64)

# 3D: heat, laplace and star7 at time_block 1 and 2, wave once: 7 rows a size
bench_run(${OUT}/shapes3d 14 4 --workload all --dims 3 --sizes 17x9x6,12 --time-block 1,2)
if(NOT table MATCHES "\nheat +3 +17x9x6 +cpu ")
  message(FATAL_ERROR "the 3D table does not show the shape 17x9x6")
endif()
# raymarch (issue 26): a row a mode and image, 3D only, named on its own
bench_run(${OUT}/raymarch 6 2 --workload raymarch --dims 3 --sizes 12,11x9x10 --images 31x17)
if(NOT table MATCHES "\nraymarch/mip@31x17 +12\\^3 +cpu ")
  message(FATAL_ERROR "the raymarch table does not show the mip row at 12^3")
endif()
# 2D: a non-square grid and a square one
bench_run(${OUT}/shapes2d 4 3 --workload heat,laplace --dims 2 --sizes 33x9,16)
if(NOT table MATCHES "\nlaplace/jacobi +2 +33x9 +cpu ")
  message(FATAL_ERROR "the 2D table does not show the shape 33x9")
endif()
