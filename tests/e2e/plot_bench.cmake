# plot_bench.py on the JSONs the bench e2e test wrote: two PNGs per workload
# (bench_<w>.png, bench_<w>_sweep.png), for cubes, for non-cubic shapes in 3D
# and 2D (issue 21; the sweep also against nx), and for an old bench.json with
# neither shape nor time_block (docs/data/bench_h200.json).
# Inputs (-D): PY PLOT JSON OUT OLD
file(REMOVE_RECURSE ${OUT})
get_filename_component(bench_dir ${JSON} DIRECTORY)

# plot(JSON DIR WORKLOADS [ARGS...]): the PNGs of each workload are there and PNGs.
function(plot json dir workloads)
  execute_process(COMMAND ${PY} ${PLOT} ${json} --out ${dir} ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("plot_bench.py ${json} ${ARGN}: exit ${rc}\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "plot_bench.py exited ${rc} on ${json}")
  endif()
  foreach(w ${workloads})
    foreach(png ${dir}/bench_${w}.png ${dir}/bench_${w}_sweep.png)
      if(NOT EXISTS ${png})
        message(FATAL_ERROR "no ${png}")
      endif()
      file(READ ${png} magic LIMIT 8 HEX)
      if(NOT magic STREQUAL "89504e470d0a1a0a")
        message(FATAL_ERROR "${png} is not a PNG (starts ${magic})")
      endif()
      file(SIZE ${png} bytes)
      if(bytes LESS 10000)
        message(FATAL_ERROR "${png} is only ${bytes} bytes")
      endif()
    endforeach()
  endforeach()
endfunction()

plot(${JSON} ${OUT} "heat;stencil;laplace;wave")
plot(${bench_dir}/shapes3d/bench.json ${OUT}/shapes3d "heat;stencil;laplace;wave")
plot(${bench_dir}/shapes2d/bench.json ${OUT}/shapes2d "heat;laplace" --x nx)
plot(${OLD} ${OUT}/old "heat;stencil;laplace")
