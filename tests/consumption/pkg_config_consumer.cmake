# The pkg-config path: install clzero with a configured prefix, as
# distributions do (cmake -DCMAKE_INSTALL_PREFIX=... && cmake --install), ask
# pkg-config for clzero's flags, compile the consumer with them alone (no
# CMake), and run it.
#   -DSOURCE=<clzero source> -DWORK=<scratch folder> -DGENERATOR=... -DCXX=...
#   -DCONSUMER=<fresh_output.cpp> -DPKG_CONFIG=<pkg-config> -DVERSION=<clzero version>
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK}/prefix)
file(REMOVE_RECURSE ${WORK})
# Configured for one prefix, installed into another: the .pc file must follow
# the installation (it is relocatable through ${pcfiledir}).
run("configuring clzero" ${CMAKE_COMMAND} -S ${SOURCE} -B ${WORK}/build -G ${GENERATOR}
    -DCMAKE_INSTALL_PREFIX=${WORK}/configured-prefix
    -DCLZERO_BUILD_TESTS=OFF -DCLZERO_BUILD_EXAMPLES=OFF -DCLZERO_BUILD_TOOLS=OFF -DCLZERO_BUILD_BENCHMARKS=OFF)
run("installing clzero" ${CMAKE_COMMAND} --install ${WORK}/build --prefix ${prefix})

set(ENV{PKG_CONFIG_PATH} ${prefix}/share/pkgconfig)
run("pkg-config --modversion clzero" ${PKG_CONFIG} --modversion clzero)
if(NOT out STREQUAL VERSION)
  message(FATAL_ERROR "pkg-config says clzero ${out}, the project is ${VERSION}")
endif()
run("pkg-config --cflags clzero" ${PKG_CONFIG} --cflags clzero)
set(cflags "${out}")
string(REGEX MATCH "-I([^ ]+)" include_flag "${cflags}")
get_filename_component(include_dir "${CMAKE_MATCH_1}" REALPATH)
get_filename_component(wanted_dir "${prefix}/include" REALPATH)
if(NOT include_dir STREQUAL wanted_dir)
  message(FATAL_ERROR "pkg-config --cflags clzero gives '${cflags}', which is not -I${prefix}/include")
endif()
if(cflags MATCHES "-D")
  message(FATAL_ERROR "pkg-config --cflags clzero defines macros for its users: '${cflags}'")
endif()
run("pkg-config --libs clzero" ${PKG_CONFIG} --libs clzero)
set(libs "${out}")
if(NOT libs MATCHES "-lOpenCL")
  message(FATAL_ERROR "pkg-config --libs clzero gives '${libs}', without the OpenCL loader")
endif()
message(STATUS "pkg-config: cflags '${cflags}', libs '${libs}'")

separate_arguments(cflags UNIX_COMMAND "${cflags}")
separate_arguments(libs UNIX_COMMAND "${libs}")
foreach(version 120 300)
  set(exe ${WORK}/fresh_output_cl${version})
  run("compiling with pkg-config's flags (CL_TARGET_OPENCL_VERSION ${version})"
      ${CXX} -std=c++17 -Wall -Wextra -Wpedantic -Werror -DCL_TARGET_OPENCL_VERSION=${version}
      -DCONSUMER_CL_VERSION=${version} "-DCONSUMER_HOW=\"pkg-config\"" ${cflags} ${CONSUMER} -o ${exe} ${libs})
  run("running the pkg-config consumer" ${exe})
  message(STATUS "${out}")
  if(NOT out MATCHES "PASS")
    message(FATAL_ERROR "the pkg-config consumer did not pass")
  endif()
endforeach()
