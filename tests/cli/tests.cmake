# server_libpq: `rackdb server` driven through libpq and raw protocol bytes
# (tests/cli/server_libpq.c); it starts the server itself from $RACKDB.
# Built only where libpq is installed (apt-get install libpq-dev).
find_library(PQ_LIB NAMES pq)
find_path(PQ_INC NAMES libpq-fe.h PATH_SUFFIXES postgresql)
if(PQ_LIB AND PQ_INC AND TARGET rackdb)
  add_executable(cli_server_libpq ${CMAKE_CURRENT_LIST_DIR}/server_libpq.c)
  target_include_directories(cli_server_libpq PRIVATE ${CMAKE_SOURCE_DIR}/tests ${CMAKE_SOURCE_DIR} ${PQ_INC})
  target_link_libraries(cli_server_libpq PRIVATE rackdb_net ${PQ_LIB} Threads::Threads)
  add_test(NAME cli/server_libpq COMMAND cli_server_libpq)
  # TIMEOUT: a hang among the 50 concurrent clients fails instead of stalling CI
  set_tests_properties(cli/server_libpq PROPERTIES ENVIRONMENT "${RACKDB_TEST_ENV}"
                       LABELS "cli" WORKING_DIRECTORY ${CMAKE_BINARY_DIR} TIMEOUT 600)
endif()

# The cluster tests start several `rackdb server --cluster` processes on
# loopback ports: one at a time, never beside the other multiplexer tests.
set_tests_properties(cli/test_tpch_cluster cli/test_tpch_cluster_sf01 cli/test_cluster_faults
                     PROPERTIES RESOURCE_LOCK mux_loopback_ports)
