# mux_node: one rank of the multi-process multiplexer tests (test_mux_*.sh)
# and of bench/shuffle; each rank is a separate process on loopback.
add_executable(mux_node ${CMAKE_CURRENT_LIST_DIR}/mux_node.c)
target_link_libraries(mux_node PRIVATE rackdb_net)

# The multi-process tests bind several loopback ports each: run them one at a
# time so they never race each other for ports (other tests still run beside).
set_tests_properties(net/test_mux_shuffle net/test_mux_faults net/test_mux_netns
                     PROPERTIES RESOURCE_LOCK mux_loopback_ports)
