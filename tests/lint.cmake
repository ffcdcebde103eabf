# Checks of the source layout (docs/design.md, "The execution layer"), run by
# ctest as `cmake -DGF_SOURCE_DIR=... -P tests/lint.cmake`:
#  - no index arithmetic written by hand outside grid/view.hpp
#    (i + n[0]*(j + n[1]*k) and the like: a field's layout is Layout's);
#  - no include from core/, grid/ or kernels/ to a floor above it
#    (core < grid < kernels < solvers, io < app), and none from io/ to
#    kernels/, solvers/ or app/: gridforge_io is built and linked without them
#    (the case loader's fuzzer), so what needs the numerics is solvers' work;
#  - no source file over 800 lines, except the hand-tuned CUDA kernels (*.cuh).
# Each finding is printed as file:line: what; any finding fails the test.
cmake_minimum_required(VERSION 3.20)
if(NOT GF_SOURCE_DIR)
  message(FATAL_ERROR "lint.cmake: pass -DGF_SOURCE_DIR=<the source tree>")
endif()
set(findings 0)
set(floors core grid kernels solvers io app)

file(GLOB_RECURSE sources RELATIVE ${GF_SOURCE_DIR}
  ${GF_SOURCE_DIR}/core/* ${GF_SOURCE_DIR}/grid/* ${GF_SOURCE_DIR}/kernels/*
  ${GF_SOURCE_DIR}/solvers/* ${GF_SOURCE_DIR}/io/* ${GF_SOURCE_DIR}/app/*)
list(FILTER sources INCLUDE REGEX "\\.(hpp|cpp|cu|cuh)$")

foreach(f IN LISTS sources)
  file(STRINGS ${GF_SOURCE_DIR}/${f} lines)
  list(LENGTH lines nlines)
  string(REGEX MATCH "^[a-z]+" floor "${f}")
  set(allowed)
  if(floor STREQUAL "core")
    set(allowed core)
  elseif(floor STREQUAL "grid")
    set(allowed core grid)
  elseif(floor STREQUAL "kernels")
    set(allowed core grid kernels)
  elseif(floor STREQUAL "io")
    set(allowed core grid io)
  endif()
  set(ln 0)
  foreach(line IN LISTS lines)
    math(EXPR ln "${ln} + 1")
    # A point's index by hand: n[0] * (...) or (... + n[1] * k), the idioms
    # of x-fastest dense arrays.
    if(NOT f STREQUAL "grid/view.hpp" AND
       line MATCHES "n\\[0\\] *\\* *\\(|\\+ *[A-Za-z_.]*n\\[1\\] *\\* *[a-z(]|\\+ *[A-Za-z_.]*n\\[0\\] *\\* *\\(")
      message("${f}:${ln}: index arithmetic outside grid/view.hpp (use Layout::index or FieldView): ${line}")
      math(EXPR findings "${findings} + 1")
    endif()
    if(allowed AND line MATCHES "^#include \"([a-z_]+)/")
      set(to "${CMAKE_MATCH_1}")
      list(FIND floors "${to}" known)
      list(FIND allowed "${to}" ok)
      if(known GREATER -1 AND ok EQUAL -1)
        if(floor STREQUAL "io")
          message("${f}:${ln}: io/ includes ${to}/, which gridforge_io is built without")
        else()
          message("${f}:${ln}: ${floor}/ includes ${to}/, a floor above it")
        endif()
        math(EXPR findings "${findings} + 1")
      endif()
    endif()
  endforeach()
  if(nlines GREATER 800 AND NOT f MATCHES "\\.cuh$")
    message("${f}: ${nlines} lines, over 800: split it by concern")
    math(EXPR findings "${findings} + 1")
  endif()
endforeach()

if(findings GREATER 0)
  message(FATAL_ERROR "lint: ${findings} finding(s)")
endif()
list(LENGTH sources count)
message("lint: ${count} files clean")
