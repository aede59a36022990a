# mux_node: one rank of the multi-process multiplexer tests (test_mux_*.sh)
# and of bench/shuffle; each rank is a separate process on loopback.
add_executable(mux_node ${CMAKE_CURRENT_LIST_DIR}/mux_node.c)
target_link_libraries(mux_node PRIVATE rackdb_net)
