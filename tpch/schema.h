/*
 * schema.h — the eight TPC-H tables' columns, listed once (schema.sql).
 *
 * Each list gives a column's name, its kind and its declared length. The
 * kind fixes both the SQL type and how dbgen spells the value in a .tbl
 * file:
 *   INT     INTEGER, printed as an integer
 *   MONEY   DECIMAL(15,2) held in hundredths, printed d.dd
 *   WHOLE   DECIMAL(15,2) held in hundredths, printed as a whole number
 *           (dbgen writes l_quantity that way)
 *   DATE    DATE, days since 1970-01-01, printed YYYY-MM-DD
 *   CHAR    CHAR(n), printed as is
 *   VARCHAR VARCHAR(n), printed as is
 * gen.c expands the lists into table descriptions, gen_files.c into one
 * straight-line formatter per table.
 */
#ifndef RACKDB_TPCH_SCHEMA_H
#define RACKDB_TPCH_SCHEMA_H

// clang-format off
#define TPCH_PART_COLUMNS(X) \
    X(p_partkey, INT, 0) \
    X(p_name, VARCHAR, 55) \
    X(p_mfgr, CHAR, 25) \
    X(p_brand, CHAR, 10) \
    X(p_type, VARCHAR, 25) \
    X(p_size, INT, 0) \
    X(p_container, CHAR, 10) \
    X(p_retailprice, MONEY, 0) \
    X(p_comment, VARCHAR, 23)

#define TPCH_PARTSUPP_COLUMNS(X) \
    X(ps_partkey, INT, 0) \
    X(ps_suppkey, INT, 0) \
    X(ps_availqty, INT, 0) \
    X(ps_supplycost, MONEY, 0) \
    X(ps_comment, VARCHAR, 199)

#define TPCH_SUPPLIER_COLUMNS(X) \
    X(s_suppkey, INT, 0) \
    X(s_name, CHAR, 25) \
    X(s_address, VARCHAR, 40) \
    X(s_nationkey, INT, 0) \
    X(s_phone, CHAR, 15) \
    X(s_acctbal, MONEY, 0) \
    X(s_comment, VARCHAR, 101)

#define TPCH_CUSTOMER_COLUMNS(X) \
    X(c_custkey, INT, 0) \
    X(c_name, VARCHAR, 25) \
    X(c_address, VARCHAR, 40) \
    X(c_nationkey, INT, 0) \
    X(c_phone, CHAR, 15) \
    X(c_acctbal, MONEY, 0) \
    X(c_mktsegment, CHAR, 10) \
    X(c_comment, VARCHAR, 117)

#define TPCH_ORDERS_COLUMNS(X) \
    X(o_orderkey, INT, 0) \
    X(o_custkey, INT, 0) \
    X(o_orderstatus, CHAR, 1) \
    X(o_totalprice, MONEY, 0) \
    X(o_orderdate, DATE, 0) \
    X(o_orderpriority, CHAR, 15) \
    X(o_clerk, CHAR, 15) \
    X(o_shippriority, INT, 0) \
    X(o_comment, VARCHAR, 79)

#define TPCH_LINEITEM_COLUMNS(X) \
    X(l_orderkey, INT, 0) \
    X(l_partkey, INT, 0) \
    X(l_suppkey, INT, 0) \
    X(l_linenumber, INT, 0) \
    X(l_quantity, WHOLE, 0) \
    X(l_extendedprice, MONEY, 0) \
    X(l_discount, MONEY, 0) \
    X(l_tax, MONEY, 0) \
    X(l_returnflag, CHAR, 1) \
    X(l_linestatus, CHAR, 1) \
    X(l_shipdate, DATE, 0) \
    X(l_commitdate, DATE, 0) \
    X(l_receiptdate, DATE, 0) \
    X(l_shipinstruct, CHAR, 25) \
    X(l_shipmode, CHAR, 10) \
    X(l_comment, VARCHAR, 44)

#define TPCH_NATION_COLUMNS(X) \
    X(n_nationkey, INT, 0) \
    X(n_name, CHAR, 25) \
    X(n_regionkey, INT, 0) \
    X(n_comment, VARCHAR, 152)

#define TPCH_REGION_COLUMNS(X) \
    X(r_regionkey, INT, 0) \
    X(r_name, CHAR, 25) \
    X(r_comment, VARCHAR, 152)

/* Every table with its column list, in tpch_table_id order. */
#define TPCH_TABLE_COLUMNS(X) \
    X(PART, TPCH_PART_COLUMNS) \
    X(PARTSUPP, TPCH_PARTSUPP_COLUMNS) \
    X(SUPPLIER, TPCH_SUPPLIER_COLUMNS) \
    X(CUSTOMER, TPCH_CUSTOMER_COLUMNS) \
    X(ORDERS, TPCH_ORDERS_COLUMNS) \
    X(LINEITEM, TPCH_LINEITEM_COLUMNS) \
    X(NATION, TPCH_NATION_COLUMNS) \
    X(REGION, TPCH_REGION_COLUMNS)
// clang-format on

#endif
