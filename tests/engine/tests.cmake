# The distributed execution tests listen on loopback ports (multiplexers of
# one to three servers): run them one at a time, and never beside the
# multiplexer's own multi-process tests, so they never race for ports.
set_tests_properties(engine/test_dist_tpch engine/test_dist_cluster
                     PROPERTIES RESOURCE_LOCK mux_loopback_ports)
