"""The five TPC-C transactions (clause 2.4 - 2.8) as the row operations of
``models.engine.innodb.ops``, in DBT-2's order of statements, and the mix.

Per transaction, home warehouse ``w`` uniform over the warehouses and district ``d``
uniform 1..10 (keying and think time 0, as DBT-2 and tpcc-mysql are run for
throughput: every connection issues its next transaction at once):

- New-Order (45 %): WAREHOUSE read (w_tax); DISTRICT update (d_next_o_id + 1, the
  ``SELECT ... FOR UPDATE`` and the ``UPDATE`` as one row change); CUSTOMER read;
  ORDERS and NEW_ORDER inserts at the district's right end; then per item (5..15,
  mean 10; ``NURand(8191, 1, 100000)``, 1 % from a remote warehouse's STOCK when there
  are several): ITEM read, STOCK update (read-modify-write of s_quantity), ORDER_LINE
  insert. 1 % end with ``ROLLBACK`` (the last item number is unused: clause 2.4.1.4;
  its ITEM read finds nothing, the ORDER_LINE insert is not issued); their order
  number is reused by the district's next New-Order.
- Payment (43 %): WAREHOUSE and DISTRICT updates (w_ytd, d_ytd); the customer (85 %
  of the home warehouse, else a remote one) by last name (60 %: ``i_customer`` range
  over the ~3 customers of the name, ``NURand(255, 0, 999)``, the middle one updated)
  or by id (40 %, ``NURand(1023, 1, 3000)``), then its update; HISTORY insert.
- Order-Status (4 %, read-only): the customer (by name 60 % / by id), its last order
  through ``i_orders``, that order's lines (a range of ORDER_LINE).
- Delivery (4 %): for each of the 10 districts with an undelivered order: the oldest
  NEW_ORDER (a range of 1), its delete, the ORDERS update (o_carrier_id), the update of
  each of its lines (ol_delivery_d), their sum (a range), the CUSTOMER update.
- Stock-Level (4 %, read-only): DISTRICT read (d_next_o_id), the lines of the
  district's last 20 orders (a range of ORDER_LINE), a STOCK read of each distinct
  item among them (the join, issued as its row reads).

The orders' state is shared by all connections, as the database's is: each district's
next order number, its oldest undelivered order, where each order's lines start, and
the items of its last 20 orders (Stock-Level reads their STOCK rows: the rows New-Order
has just touched). A loaded order's items are uniform, as the loader draws them; with
``warm`` (the database as a previous run left it, ``TpccConfig.warm_pool``) the loaded
orders Stock-Level reads were placed by New-Orders, so their items are NURand's.

Simplified: the customers a by-name read finds are the server's (``ops.secondary_row``:
placed by a hash, not by name), a by-name Payment updates the middle one of them; the
customer of an order Delivery credits is drawn afresh;
Order-Status picks the customer's last order uniformly among the district's orders;
the one ``UPDATE order_line`` of Delivery is one row change per line (each with the
statement's CPU).
"""
from __future__ import annotations

from collections import deque

from ...engine.innodb.ops import Op, Transaction, secondary_row
from . import nurand
from .schema import (CUSTOMERS, DISTRICTS, ITEMS, LAST_NAMES, LINES_PER_LOADED_ORDER,
                     NEW_ORDER_FIRST, ORDERS, PER_LAST_NAME, customer_key,
                     customer_name_key, district_no, stock_key, table_defs)

TYPES = ("new_order", "payment", "order_status", "delivery", "stock_level")
MIX_PCT = (45, 43, 4, 4, 4)
STOCK_LEVEL_ORDERS = 20


class TpccState:
    """The orders of every district (shared by the connections)."""

    def __init__(self, warehouses: int, warm: bool = False) -> None:
        self.warm = warm
        self.defs = {t.name: t for t in table_defs(warehouses)}
        n = warehouses * DISTRICTS
        self.next_o_id = [ORDERS + 1] * n
        self.oldest_new = [NEW_ORDER_FIRST] * n
        self.next_line = [ORDERS * LINES_PER_LOADED_ORDER + 1] * n
        self.lines: list[dict[int, tuple[int, int]]] = [{} for _ in range(n)]  # o_id -> (first, count)
        self.items: list[deque] = [deque(maxlen=STOCK_LEVEL_ORDERS) for _ in range(n)]
        self.history_rows = self.defs["history"].rows

    def order_lines(self, g: int, o_id: int) -> tuple[int, int]:
        """(first line seq, line count) of order ``o_id`` of district ``g``."""
        if o_id <= ORDERS:
            return (o_id - 1) * LINES_PER_LOADED_ORDER + 1, LINES_PER_LOADED_ORDER
        return self.lines[g][o_id]


class TxnBuilder:
    """Draws each transaction of the mix for a connection's ``TpccRand``."""

    def __init__(self, warehouses: int, state: TpccState | None = None) -> None:
        self.w = warehouses
        self.state = state or TpccState(warehouses)
        self.defs = self.state.defs
        self._customers = self.defs["customer"].rows
        self.counts = dict.fromkeys(TYPES, 0)
        cum, acc = [], 0
        for p in MIX_PCT:
            acc += p
            cum.append(acc / 100)
        self.cum = cum

    def build(self, rnd) -> tuple[str, Transaction]:
        u, cum = rnd.u01(), self.cum
        i = 0
        while i < len(cum) - 1 and u >= cum[i]:
            i += 1
        kind = TYPES[i]
        w, d = rnd.uniform(1, self.w), rnd.uniform(1, DISTRICTS)
        trx = getattr(self, kind)(rnd, w, d)
        self.counts[kind] += 1
        return kind, trx

    # -- helpers --------------------------------------------------------------------------
    def _other_w(self, rnd, w: int) -> int:
        if self.w == 1:
            return w
        o = rnd.uniform(1, self.w - 1)
        return o if o < w else o + 1

    def _customer(self, rnd, w: int, d: int, ops: list, update: bool) -> None:
        """The customer by last name (60 %) or by id, read; ``update``: then changed."""
        if rnd.u01() < 0.6:
            name = rnd.nurand(nurand.A_C_LAST, 0, LAST_NAMES - 1)
            key = customer_name_key(w, d, name)
            ops.append(Op("range_select", "customer", key, PER_LAST_NAME, "i_customer"))
            if update:      # the middle one of those found (clause 2.5.2.2: n / 2 rounded up)
                ops.append(Op("update_non_index", "customer",
                              secondary_row(key, PER_LAST_NAME // 2, self._customers)))
        else:
            c = rnd.nurand(nurand.A_C_ID, 1, CUSTOMERS)
            ops.append(Op("update_non_index" if update else "point_select", "customer",
                          customer_key(w, d, c)))

    # -- the five transactions -----------------------------------------------------------
    def new_order(self, rnd, w: int, d: int) -> Transaction:
        st, defs = self.state, self.defs
        g = district_no(w, d)
        o_id = st.next_o_id[g]
        n_items = rnd.uniform(5, 15)
        rollback = rnd.uniform(1, 100) == 1
        c = rnd.nurand(nurand.A_C_ID, 1, CUSTOMERS)
        ops = [Op("point_select", "warehouse", w),
               Op("update_non_index", "district", g + 1),
               Op("point_select", "customer", customer_key(w, d, c)),
               Op("insert", "orders", defs["orders"].key(g, o_id)),
               Op("insert", "new_order", defs["new_order"].key(g, o_id - NEW_ORDER_FIRST + 1))]
        first = st.next_line[g]
        ol = defs["order_line"]
        items = []
        for n in range(n_items):
            if rollback and n == n_items - 1:
                ops.append(Op("point_select", "item", ITEMS))     # the unused number: not found
                break
            i = rnd.nurand(nurand.A_OL_I_ID, 1, ITEMS)
            supply = w if self.w == 1 or rnd.uniform(1, 100) > 1 else self._other_w(rnd, w)
            items.append(i)
            ops.append(Op("point_select", "item", i))
            ops.append(Op("update_non_index", "stock", stock_key(supply, i)))
            ops.append(Op("insert", "order_line", ol.key(g, first + n)))
        if not rollback:
            st.next_o_id[g] = o_id + 1
            st.next_line[g] = first + n_items
            st.lines[g][o_id] = (first, n_items)
            st.items[g].append(tuple(items))
        return Transaction(tuple(ops), rollback=rollback)

    def payment(self, rnd, w: int, d: int) -> Transaction:
        st = self.state
        ops = [Op("update_non_index", "warehouse", w),
               Op("update_non_index", "district", district_no(w, d) + 1)]
        cw, cd = w, d
        if self.w > 1 and rnd.uniform(1, 100) > 85:
            cw, cd = self._other_w(rnd, w), rnd.uniform(1, DISTRICTS)
        self._customer(rnd, cw, cd, ops, update=True)
        st.history_rows += 1
        ops.append(Op("insert", "history", st.history_rows))
        return Transaction(tuple(ops))

    def order_status(self, rnd, w: int, d: int) -> Transaction:
        st = self.state
        ops: list[Op] = []
        self._customer(rnd, w, d, ops, update=False)
        g = district_no(w, d)
        o_id = rnd.uniform(1, st.next_o_id[g] - 1)
        ops.append(Op("range_select", "orders", g * CUSTOMERS + rnd.uniform(1, CUSTOMERS), 1,
                      "i_orders"))
        first, count = st.order_lines(g, o_id)
        ops.append(Op("range_select", "order_line", self.defs["order_line"].key(g, first),
                      count))
        return Transaction(tuple(ops))

    def delivery(self, rnd, w: int, d: int) -> Transaction:
        st, defs = self.state, self.defs
        ol = defs["order_line"]
        ops: list[Op] = []
        for dd in range(1, DISTRICTS + 1):
            g = district_no(w, dd)
            o_id = st.oldest_new[g]
            if o_id >= st.next_o_id[g]:
                continue                          # no undelivered order in the district
            st.oldest_new[g] = o_id + 1
            no_key = defs["new_order"].key(g, o_id - NEW_ORDER_FIRST + 1)
            ops.append(Op("range_select", "new_order", no_key, 1))
            ops.append(Op("delete", "new_order", no_key))
            ops.append(Op("update_non_index", "orders", defs["orders"].key(g, o_id)))
            first, count = st.order_lines(g, o_id)
            for n in range(count):
                ops.append(Op("update_non_index", "order_line", ol.key(g, first + n)))
            ops.append(Op("range_select", "order_line", ol.key(g, first), count, variant="sum"))
            c = rnd.uniform(1, CUSTOMERS)
            ops.append(Op("update_non_index", "customer", customer_key(w, dd, c)))
        if not ops:                               # nothing to deliver: the district read
            ops.append(Op("point_select", "district", district_no(w, d) + 1))
        return Transaction(tuple(ops))

    def stock_level(self, rnd, w: int, d: int) -> Transaction:
        st = self.state
        g = district_no(w, d)
        nxt = st.next_o_id[g]
        lo = max(1, nxt - STOCK_LEVEL_ORDERS)
        first, _ = st.order_lines(g, lo)
        last_first, last_count = st.order_lines(g, nxt - 1)
        rows = last_first + last_count - first
        ops = [Op("point_select", "district", g + 1),
               Op("range_select", "order_line", self.defs["order_line"].key(g, first), rows)]
        recent = list(st.items[g])
        loaded_lines = rows - sum(len(t) for t in recent)
        items = {i for t in recent for i in t}
        if st.warm:
            items.update(rnd.nurand(nurand.A_OL_I_ID, 1, ITEMS) for _ in range(loaded_lines))
        else:
            items.update(rnd.uniform(1, ITEMS) for _ in range(loaded_lines))
        for i in sorted(items):
            ops.append(Op("point_select", "stock", stock_key(w, i)))
        return Transaction(tuple(ops))
