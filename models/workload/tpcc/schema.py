"""The nine TPC-C tables as DBT-2 creates them on MySQL, sized from the warehouse count
by the TPC-C specification (revision 5.11, clause 4.3.3.1: the initial population),
and the integer keys the engine's ``ops`` contract uses for their composite keys.

Per warehouse: 1 WAREHOUSE, 10 DISTRICT, 30,000 CUSTOMER (3,000 per district),
30,000 HISTORY, 30,000 ORDERS (o_id 1..3,000 per district), 9,000 NEW_ORDER (the
last 900 orders of each district, 2,101..3,000), ~300,000 ORDER_LINE and 100,000
STOCK; ITEM has 100,000 rows whatever the warehouse count. Row bytes are the
specification's (clause 1.2, "row length"); DBT-2's secondary indexes
(``create_indexes.sh``): ``i_customer`` (c_w_id, c_d_id, c_last, c_first, c_id) and
``i_orders`` (o_w_id, o_d_id, o_c_id). HISTORY has no primary key in DBT-2: InnoDB
keys it by its hidden ``DB_ROW_ID``, so every insert goes to the right end of the
table.

Keys (``TableDef.key``): WAREHOUSE ``w``; DISTRICT ``(w - 1) * 10 + d``; CUSTOMER
``district * 3000 + c``; STOCK ``(w - 1) * 100000 + i``; ITEM ``i``. ORDERS, NEW_ORDER
and ORDER_LINE are grouped by district (``TableDef.groups``: each district grows at
its own right end): ORDERS by o_id, NEW_ORDER by ``o_id - 2100``, ORDER_LINE by the
district's order-line sequence (loaded orders have 10 lines each, so order ``o``'s lines
start at ``(o - 1) * 10 + 1``; orders placed in the run continue the sequence).

Simplified: the loaded orders have exactly 10 lines (the specification draws 5..15,
mean 10), so ORDER_LINE is 300,000 rows per warehouse; ``i_customer`` is positioned by
last name (1,000 names, 3 customers each per district; its entries lead to rows the
server places by a hash, not to the named customers); ``i_orders`` the same.
"""
from __future__ import annotations

from ...engine.innodb.ops import TableDef

DISTRICTS = 10                 # per warehouse
CUSTOMERS = 3000               # per district
ORDERS = 3000                  # per district, loaded
NEW_ORDER_FIRST = 2101         # the first undelivered order of a loaded district
LINES_PER_LOADED_ORDER = 10
ITEMS = 100_000
STOCK = 100_000                # per warehouse
LAST_NAMES = 1000              # C_LAST from three syllables of ten
PER_LAST_NAME = CUSTOMERS // LAST_NAMES

# row length in bytes (TPC-C clause 1.2)
ROW_BYTES = {"warehouse": 89, "district": 95, "customer": 655, "history": 46,
             "new_order": 8, "orders": 24, "order_line": 54, "item": 82, "stock": 306}
# creation order (space ids 1..9): the small tables every transaction reads first, then
# STOCK and CUSTOMER, the append-only HISTORY and ORDER_LINE last - the order the
# server's ``preload`` fills a warm pool in
TABLES = ("warehouse", "district", "item", "new_order", "orders", "stock", "customer",
          "history", "order_line")


def table_defs(warehouses: int) -> tuple[TableDef, ...]:
    """The loaded database of ``warehouses`` warehouses."""
    d = warehouses * DISTRICTS
    defs = (
        TableDef("warehouse", warehouses, ROW_BYTES["warehouse"]),
        TableDef("district", d, ROW_BYTES["district"]),
        # i_customer: c_w_id 4 + c_d_id 4 + c_last 16 + c_first 16 (+ c_id, the key)
        TableDef("customer", d * CUSTOMERS, ROW_BYTES["customer"], ("i_customer",), 40),
        TableDef("history", d * CUSTOMERS, ROW_BYTES["history"]),
        TableDef("new_order", d * (ORDERS - NEW_ORDER_FIRST + 1), ROW_BYTES["new_order"],
                 groups=d),
        # i_orders: o_w_id 4 + o_d_id 4 + o_c_id 4
        TableDef("orders", d * ORDERS, ROW_BYTES["orders"], ("i_orders",), 12, groups=d),
        TableDef("order_line", d * ORDERS * LINES_PER_LOADED_ORDER, ROW_BYTES["order_line"],
                 groups=d),
        TableDef("item", ITEMS, ROW_BYTES["item"]),
        TableDef("stock", warehouses * STOCK, ROW_BYTES["stock"]),
    )
    by_name = {t.name: t for t in defs}
    return tuple(by_name[n] for n in TABLES)


def district_no(w: int, d: int) -> int:
    """0-based district number of district ``d`` (1..10) of warehouse ``w`` (1..W): the
    group of the grouped tables."""
    return (w - 1) * DISTRICTS + d - 1


def customer_key(w: int, d: int, c: int) -> int:
    return district_no(w, d) * CUSTOMERS + c


def customer_name_key(w: int, d: int, name: int) -> int:
    """Position in ``i_customer`` of the first customer of last name ``name`` (0..999)."""
    return district_no(w, d) * CUSTOMERS + name * PER_LAST_NAME + 1


def stock_key(w: int, i: int) -> int:
    return (w - 1) * STOCK + i
