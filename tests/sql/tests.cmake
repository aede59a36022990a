# sql/test_slt runs SQL through the public C API, which lives in the engine
# library: link it on top of rackdb_sql.
if(TARGET sql_test_slt)
  target_link_libraries(sql_test_slt PRIVATE rackdb_engine)
endif()
# sql/test_error_classes checks each error class end to end through the
# public C API: link the engine too.
if(TARGET sql_test_error_classes)
  target_link_libraries(sql_test_error_classes PRIVATE rackdb_engine)
endif()
