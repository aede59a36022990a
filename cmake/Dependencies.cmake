# Finds every library the design names and wraps them in interface targets:
#   rackdb_deps       LLVM 19 (C API), libnuma, rdma-core, libssl + libcrypto (server TLS, SCRAM), pthread, libm
#   rackdb_edit       libedit (the shell only)
#   rackdb_allocator  jemalloc (programs only; not under sanitizers, whose
#                     allocator must stay in charge)
# A missing dependency fails here naming the Debian package to install.

function(rackdb_require_lib var lib header pkg)
  find_library(${var}_LIB NAMES ${lib})
  find_path(${var}_INC NAMES ${header})
  if(NOT ${var}_LIB OR NOT ${var}_INC)
    message(FATAL_ERROR "rackdb needs ${lib} (${header}): apt-get install ${pkg}")
  endif()
  set(${var}_LIB ${${var}_LIB} PARENT_SCOPE)
  set(${var}_INC ${${var}_INC} PARENT_SCOPE)
endfunction()

find_program(LLVM_CONFIG NAMES llvm-config-19 PATHS /usr/lib/llvm-19/bin)
if(NOT LLVM_CONFIG)
  message(FATAL_ERROR "rackdb needs LLVM 19 (llvm-config-19): apt-get install llvm-19-dev")
endif()
execute_process(COMMAND ${LLVM_CONFIG} --version OUTPUT_VARIABLE LLVM_VERSION
                OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE LLVM_CONFIG_RC)
if(NOT LLVM_CONFIG_RC EQUAL 0 OR LLVM_VERSION STREQUAL "")
  message(FATAL_ERROR "rackdb needs LLVM 19, but ${LLVM_CONFIG} --version failed: apt-get install llvm-19-dev")
endif()
if(NOT LLVM_VERSION MATCHES "^19\\.")
  message(FATAL_ERROR "rackdb needs LLVM 19, ${LLVM_CONFIG} reports ${LLVM_VERSION}: apt-get install llvm-19-dev")
endif()
execute_process(COMMAND ${LLVM_CONFIG} --includedir OUTPUT_VARIABLE LLVM_INCLUDE_DIR OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND ${LLVM_CONFIG} --libdir OUTPUT_VARIABLE LLVM_LIB_DIR OUTPUT_STRIP_TRAILING_WHITESPACE)
find_library(LLVM_SHARED_LIB NAMES LLVM-19 LLVM PATHS ${LLVM_LIB_DIR} NO_DEFAULT_PATH)
if(NOT LLVM_SHARED_LIB)
  message(FATAL_ERROR "rackdb needs libLLVM-19.so: apt-get install llvm-19-dev")
endif()

find_program(LEMON_EXECUTABLE NAMES lemon)
find_file(LEMON_TEMPLATE NAMES lempar.c PATHS /usr/share/lemon /usr/local/share/lemon NO_DEFAULT_PATH)
if(NOT LEMON_EXECUTABLE OR NOT LEMON_TEMPLATE)
  message(FATAL_ERROR "rackdb needs the lemon parser generator: apt-get install lemon")
endif()

rackdb_require_lib(NUMA numa numa.h libnuma-dev)
rackdb_require_lib(JEMALLOC jemalloc jemalloc/jemalloc.h libjemalloc-dev)
rackdb_require_lib(IBVERBS ibverbs infiniband/verbs.h libibverbs-dev)
rackdb_require_lib(RDMACM rdmacm rdma/rdma_cma.h librdmacm-dev)
rackdb_require_lib(EDIT edit histedit.h libedit-dev)
rackdb_require_lib(CRYPTO crypto openssl/evp.h libssl-dev)
rackdb_require_lib(SSL ssl openssl/ssl.h libssl-dev)
find_package(Threads REQUIRED)

add_library(rackdb_deps INTERFACE)
target_include_directories(rackdb_deps INTERFACE ${LLVM_INCLUDE_DIR} ${NUMA_INC} ${IBVERBS_INC} ${RDMACM_INC} ${CRYPTO_INC})
target_link_libraries(rackdb_deps INTERFACE ${LLVM_SHARED_LIB} ${NUMA_LIB} ${IBVERBS_LIB} ${RDMACM_LIB} ${SSL_LIB} ${CRYPTO_LIB}
                      Threads::Threads m)

add_library(rackdb_edit INTERFACE)
target_include_directories(rackdb_edit INTERFACE ${EDIT_INC})
target_link_libraries(rackdb_edit INTERFACE ${EDIT_LIB})

add_library(rackdb_allocator INTERFACE)
if(NOT RACKDB_SANITIZE)
  target_link_libraries(rackdb_allocator INTERFACE ${JEMALLOC_LIB})
endif()
