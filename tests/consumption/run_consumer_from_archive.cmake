# run_consumer.cmake for FetchContent from a release archive: reads the
# archive's SHA-256 (written by make_archive.cmake) so that the consumer
# declares URL + URL_HASH as an engine pinning a release would.
file(READ ${ARCHIVE}.sha256 hash)
set(ARGS -DCONSUMER_HOW=fetchcontent_url -DCLZERO_ARCHIVE=file://${ARCHIVE} -DCLZERO_ARCHIVE_SHA256=${hash})
include(${CMAKE_CURRENT_LIST_DIR}/run_consumer.cmake)
