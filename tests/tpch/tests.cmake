# tpch_gen_cli: cli_tpch_gen (cli/tpch_gen.c) with a tiny main, so the shell
# tests can drive `tpch gen` without the whole rackdb program.
add_executable(tpch_gen_cli ${CMAKE_CURRENT_LIST_DIR}/gen_cli_main.c
                            ${CMAKE_SOURCE_DIR}/cli/tpch_gen.c)
target_link_libraries(tpch_gen_cli PRIVATE rackdb_tpch)
