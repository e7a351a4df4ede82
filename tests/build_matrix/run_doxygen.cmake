# Builds the API reference (the repository's Doxyfile) into OUTPUT with every
# warning an error: all warnings are listed, then the run fails.
#   -DDOXYGEN=<doxygen> -DSOURCE=<clzero source> -DOUTPUT=<folder>
file(REMOVE_RECURSE ${OUTPUT})
file(MAKE_DIRECTORY ${OUTPUT})
file(WRITE ${OUTPUT}/Doxyfile "@INCLUDE = ${SOURCE}/Doxyfile\nOUTPUT_DIRECTORY = ${OUTPUT}\nWARN_AS_ERROR = FAIL_ON_WARNINGS\n")
execute_process(COMMAND ${DOXYGEN} ${OUTPUT}/Doxyfile WORKING_DIRECTORY ${SOURCE} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "doxygen reported warnings (above), or failed (${rc})")
endif()
if(NOT EXISTS ${OUTPUT}/html/index.html)
  message(FATAL_ERROR "doxygen wrote no ${OUTPUT}/html/index.html")
endif()
