# `gridforge bench` on the CPU at tiny sizes: exit 0, a table on stdout, and
# bench.json + bench.csv that check_bench.py reads against each other and SPEC.
# Inputs (-D): GF OUT PY CHECK
file(REMOVE_RECURSE ${OUT})
set(args bench --workload all --dims 2,3 --sizes 16,32 --precision float32,float64
    --devices cpu --steps 3 --repeat 3 --out ${OUT})
execute_process(COMMAND ${GF} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE table ERROR_VARIABLE err)
message("gridforge ${args}\nexit ${rc}\nstdout:\n${table}\nstderr:\n${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gridforge bench exited ${rc}")
endif()
file(WRITE ${OUT}/table.txt "${table}")
if(NOT PY)
  message(FATAL_ERROR "no Python with numpy and h5py (GF_PYTHON) to check bench.json")
endif()
# 4 workloads (heat, laplace, stencil, wave) x 2 dims x 2 precisions x 2 sizes x 1 device
execute_process(COMMAND ${PY} ${CHECK} ${OUT} --rows 32 --steps 3 --repetitions 3
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "check_bench.py failed")
endif()
