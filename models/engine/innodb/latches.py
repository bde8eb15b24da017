"""InnoDB's shared latches on the path of an autocommitted single-row statement, as in
MySQL 5.1's built-in InnoDB and InnoDB Plugin 1.0.4 (``row0ins.c``, ``lock0lock.c``,
``trx0trx.c``, ``trx0undo.c``, ``btr0cur.c``, ``mtr0mtr.c``).

Every statement of every client passes through the same few global latches; the
CPU of the statement is split between the parts done under them and the rest
(``CommitConfig``: the ``*_cycles`` figures and the reasoning behind them). In the
order a mysqlslap INSERT takes them:

- ``kernel_mutex`` - ``trx_start_low`` (rollback segment, trx id; every
  ``TRX_SYS_TRX_ID_WRITE_MARGIN`` ids the trx-sys header page is written),
  ``lock_table`` (the statement's IX lock on ``t1``:
  ``lock_table_other_has_incompatible`` walks the table's whole lock queue, one
  ``lock_t`` per active transaction - no fast path in 5.1), and
  ``lock_rec_insert_check_and_lock`` (inside the leaf latch).
- ``dict_sys->mutex`` - ``dict_sys_get_new_row_id``: ``t1`` has no primary key, so
  the clustered index is keyed on the hidden ``DB_ROW_ID`` from one server-wide
  counter; every ``DICT_HDR_ROW_ID_WRITE_MARGIN`` ids the dictionary header page is
  written (a mini-transaction, still holding the mutex). With an AUTO_INCREMENT key
  (``clustered_key="auto_increment"``) the table's ``autoinc_mutex`` instead
  (``innodb_autoinc_lock_mode`` 1/2 for a simple INSERT).
- ``index->lock`` (S) during the descent of ``btr_cur_search_to_nth_level`` with
  ``BTR_MODIFY_LEAF``, released once the leaf is latched.
- the right-most leaf's ``block->lock`` (X): every row id is larger than all others,
  so every insert goes to the same page. Held for the record-lock check, the undo
  record (``trx_undo_report_row_operation``: its own mini-transaction, and on the
  transaction's first change ``trx_undo_assign_undo`` under ``rseg->mutex``), the
  insert into the page and the ``mtr_commit`` - which, in 5.1, writes the redo
  records under ``log_sys->mutex`` and releases the page latches before releasing it.
- a full leaf: ``btr_cur_optimistic_insert`` keeps ``UNIV_PAGE_SIZE / 16`` free on a
  clustered leaf filled at its end (``dict_index_get_space_reserve``), so the insert
  fails, the statement restarts with ``BTR_MODIFY_TREE``: ``index->lock`` X (waits
  for the descents in progress, blocks every new one), ``btr_page_split_and_insert``
  (a new page from the segment, the node pointer into the parent, sibling links; at
  the right end the new page receives only the new record).
- ``rseg->mutex`` - 5.1 and the Plugin have one rollback segment: the undo-log
  state changes of prepare and commit and the reuse / caching of insert undo logs
  all take it.

The commit (``trx_commit_for_mysql`` -> ``trx_commit_off_kernel``) takes
``kernel_mutex`` three times: on entry, for ``lock_release_off_kernel`` (the table
lock's ``lock_table_dequeue`` walks the queue behind it, looking for waiters to
grant) and after the log flush (trx list removal); in between ``rseg->mutex`` and
``log_sys->mutex`` for the undo-state mini-transaction, then ``rseg->mutex`` again
for ``trx_undo_insert_cleanup``. The prepare (``trx_prepare_off_kernel``) takes
``kernel_mutex`` around its undo-state mini-transaction and again after its flush.
In the Plugin the commit runs inside ``prepare_commit_mutex``, so every wait for
these latches lengthens the serial section.

All InnoDB latches spin first (``innodb_sync_spin_loops`` x ``innodb_spin_wait_delay``,
the window ``RedoLog.spin_ns``), then sleep until ``os_event_set``; a release prefers
a waiter still spinning, otherwise frees the latch and wakes a sleeper, which pays its
wake-up and tries again (``models.sim.SpinMutex``, ``CPU.lock``).

Deliberately not modelled: ``buf_pool->mutex`` (page fix / unfix) and the adaptive
hash index's ``btr_search_latch``, ``LOCK_open`` and the server's other mutexes,
``innodb_thread_concurrency`` (the Plugin's default 0; the built-in's 8 only queues
threads that all wait for ``prepare_commit_mutex`` anyway), the undo page latches
(each transaction's own), purge, the CPU burnt by the losers of a wake-up race, the
tree growing a level.
"""
from __future__ import annotations

from ...sim import RwLatch, Simulator, SpinMutex

UNIV_PAGE_SIZE = 16384
# FIL header 38 + FIL trailer 8 + PAGE header 56 + compact infimum / supremum 26
PAGE_DATA_BYTES = UNIV_PAGE_SIZE - 38 - 8 - 56 - 26
PAGE_SPACE_RESERVE = UNIV_PAGE_SIZE // 16     # dict_index_get_space_reserve()
PAGE_DIR_SLOT_BYTES_PER_REC = 2 / 6          # one 2-byte slot owns 4..8 records
DICT_HDR_ROW_ID_WRITE_MARGIN = 256
TRX_SYS_TRX_ID_WRITE_MARGIN = 256
# mlog_write_dulint of a header field (MLOG_8BYTES: type, space, page, offset, value)
HDR_FIELD_REDO_BYTES = 16
# trx_undo_insert_header_reuse: MLOG_UNDO_HDR_REUSE (+ trx id) and the page-start /
# free fields of the cached undo page
UNDO_HDR_REUSE_REDO_BYTES = 24
# btr_page_split_and_insert at the right end: MLOG_COMP_PAGE_CREATE, the extent
# descriptor / segment inode / space header updates of fseg_alloc_free_page, the node
# pointer in the parent (MLOG_COMP_REC_INSERT with the 6-byte key and child page
# number), the FIL_PAGE_PREV / NEXT links
PAGE_SPLIT_REDO_BYTES = 220


class InnoDBLatches:
    """The global latches of one server and the ``t1`` table's right-most leaf.

    ``cfg``: the engine's ``CommitConfig`` (cycles of each latched section); ``redo``:
    the ``RedoLog`` (its ``append`` is ``mtr_commit``: ``log_sys->mutex``, held for
    ``mtr_commit_cycles``) - its spin window is every InnoDB latch's."""

    def __init__(self, sim: Simulator, cfg, cpu, redo) -> None:
        self.sim = sim
        self.cfg = cfg
        self.cpu = cpu
        self.redo = redo
        self.spin_ns = spin = redo.spin_ns
        self.kernel_mutex = SpinMutex(sim, "kernel_mutex", spin)
        self.dict_sys_mutex = SpinMutex(sim, "dict_sys->mutex", spin)
        self.autoinc_mutex = SpinMutex(sim, "table->autoinc_mutex", spin)
        self.rseg_mutex = SpinMutex(sim, "rseg->mutex", spin)
        self.index_lock = RwLatch(sim, "index->lock")
        self.leaf_latch = SpinMutex(sim, "block->lock", spin)
        self.table_locks: dict[int, None] = {}    # t1's lock queue (trx ids, oldest first)
        self.next_trx_id = 0
        self.next_row_id = 0
        self.leaf_used = 0.0                      # bytes of records on the right-most leaf
        self.leaf_splits = 0
        self.leaf_inserts = 0

    # -- helpers --------------------------------------------------------------------
    def _enter(self, mutex):
        yield from self.cpu.lock(mutex, self.spin_ns)

    def _section(self, mutex, cycles: float):
        """A short critical section: enter, ``cycles`` of work, exit."""
        yield from self.cpu.lock(mutex, self.spin_ns)
        yield from self.cpu.run(cycles)
        mutex.release()

    def _mtr_commit(self, nbytes: int):
        return (yield from self.redo.append(nbytes, self.cfg.mtr_commit_cycles))

    # -- statement start -------------------------------------------------------------
    def trx_start(self, trx):
        """``trx_start`` -> ``trx_start_low`` under ``kernel_mutex``."""
        yield from self._enter(self.kernel_mutex)
        yield from self.cpu.run(self.cfg.trx_start_cycles)
        self.next_trx_id += 1
        if self.next_trx_id % TRX_SYS_TRX_ID_WRITE_MARGIN == 0:
            yield from self._mtr_commit(HDR_FIELD_REDO_BYTES)   # trx_sys_flush_max_trx_id
        self.kernel_mutex.release()

    def lock_table_ix(self, trx):
        """``lock_table(LOCK_IX)``: the queue walk, then the new lock at its end."""
        cfg = self.cfg
        yield from self._enter(self.kernel_mutex)
        yield from self.cpu.run(cfg.lock_table_cycles
                                + cfg.lock_queue_step_cycles * len(self.table_locks))
        self.table_locks[trx.id] = None
        self.kernel_mutex.release()

    # -- the row change ----------------------------------------------------------------
    def row_insert(self, trx, stmt, on_split=None):
        """``row_ins_step`` of one row into the clustered index (the only index).
        ``on_split``: a generator function run when the insert splits the leaf, with
        ``index->lock`` X and the leaf latched (``btr_page_alloc`` of the new page)."""
        cfg, cpu = self.cfg, self.cpu
        if stmt.clustered_key == "row_id":                    # row_ins_alloc_row_id_step
            yield from self._enter(self.dict_sys_mutex)
            yield from cpu.run(cfg.row_id_cycles)
            if self.next_row_id % DICT_HDR_ROW_ID_WRITE_MARGIN == 0:
                yield from self._mtr_commit(HDR_FIELD_REDO_BYTES)   # dict_hdr_flush_row_id
            self.next_row_id += 1
            self.dict_sys_mutex.release()
        else:                            # ha_innobase::write_row -> update_auto_increment
            yield from self._section(self.autoinc_mutex, cfg.autoinc_cycles)
        # btr_cur_search_to_nth_level(BTR_MODIFY_LEAF)
        yield from cpu.spin_wait(self.index_lock.s_lock(), self.spin_ns)
        yield from cpu.run(cfg.btr_search_cycles)
        yield from self._enter(self.leaf_latch)
        self.index_lock.s_unlock()
        need = stmt.rec_bytes + PAGE_DIR_SLOT_BYTES_PER_REC
        limit = PAGE_DATA_BYTES - PAGE_SPACE_RESERVE
        tree_x = self.leaf_used + need > limit
        if tree_x:
            # the optimistic insert fails; row_ins_index_entry retries BTR_MODIFY_TREE
            self.leaf_latch.release()
            yield from cpu.spin_wait(self.index_lock.x_lock(), self.spin_ns)
            yield from cpu.run(cfg.btr_search_cycles)
            yield from self._enter(self.leaf_latch)
        # btr_cur_pessimistic_insert tries an optimistic insert first: a thread that
        # queued for index->lock behind another's split finds room on the new page
        split = tree_x and self.leaf_used + need > limit
        # btr_cur_ins_lock_and_undo
        yield from self._section(self.kernel_mutex, cfg.lock_rec_cycles)
        yield from self._undo_record(trx, stmt)
        redo = stmt.redo_bytes - stmt.undo_redo_bytes
        if split:
            yield from cpu.run(cfg.page_split_cycles)
            if on_split is not None:
                yield from on_split()
            self.leaf_splits += 1
            self.leaf_used = need                          # the new page holds the record
            redo += PAGE_SPLIT_REDO_BYTES
        else:
            yield from cpu.run(cfg.page_insert_cycles)   # page_cur_tuple_insert
            self.leaf_used += need
        yield from self._mtr_commit(redo)
        self.leaf_latch.release()
        if tree_x:
            self.index_lock.x_unlock()
        self.leaf_inserts += 1

    def _undo_record(self, trx, stmt):
        """``trx_undo_report_row_operation``: on the first change of the transaction an
        undo log is assigned (a cached one reused, under ``rseg->mutex``), then the
        undo record is written in its own mini-transaction."""
        cfg = self.cfg
        if not trx.undo:
            yield from self._section(self.rseg_mutex, cfg.undo_assign_cycles)
            yield from self._mtr_commit(UNDO_HDR_REUSE_REDO_BYTES)
            trx.undo = True
        yield from self.cpu.run(cfg.undo_record_cycles)
        yield from self._mtr_commit(stmt.undo_redo_bytes)

    # -- prepare and commit ------------------------------------------------------------
    def prepare_begin(self, trx, redo_bytes: int):
        """``trx_prepare_for_mysql`` up to its log flush; returns the prepare LSN."""
        cfg = self.cfg
        yield from self._section(self.kernel_mutex, cfg.kernel_mutex_cycles)
        yield from self._section(self.rseg_mutex, cfg.prepare_cycles)
        lsn = yield from self._mtr_commit(redo_bytes)
        yield from self._section(self.kernel_mutex, cfg.kernel_mutex_cycles)  # PREPARED
        return lsn

    def prepare_end(self, trx):
        """After the prepare flush: ``kernel_mutex`` entered again, then left."""
        yield from self._section(self.kernel_mutex, self.cfg.kernel_mutex_cycles)

    def commit_begin(self, trx, redo_bytes: int):
        """``trx_commit_off_kernel`` up to the log flush; returns the commit LSN."""
        cfg = self.cfg
        yield from self._section(self.kernel_mutex, cfg.kernel_mutex_cycles)
        yield from self._section(self.rseg_mutex, cfg.commit_cycles)
        lsn = yield from self._mtr_commit(redo_bytes)
        # lock_release_off_kernel -> lock_table_dequeue: the locks queued behind ours
        yield from self._enter(self.kernel_mutex)
        queue = self.table_locks
        behind = 0
        if trx.id in queue:
            keys = list(queue)
            behind = len(keys) - 1 - keys.index(trx.id)
            del queue[trx.id]
        yield from self.cpu.run(cfg.lock_release_cycles + cfg.lock_queue_step_cycles * behind)
        self.kernel_mutex.release()
        if trx.undo and trx.stmt.kind == "insert":
            yield from self._section(self.rseg_mutex, cfg.undo_cleanup_cycles)
        return lsn

    def commit_end(self, trx):
        """After the (possible) flush: ``kernel_mutex`` again (trx list removal)."""
        yield from self._section(self.kernel_mutex, self.cfg.kernel_mutex_cycles)

    # -- statistics ------------------------------------------------------------------
    def stats(self) -> dict:
        out = {"leaf.inserts": self.leaf_inserts, "leaf.splits": self.leaf_splits,
               "leaf.rows_per_split": self.leaf_inserts / self.leaf_splits
               if self.leaf_splits else 0.0}
        for key, m in (("kernel_mutex", self.kernel_mutex),
                       ("dict_sys_mutex", self.dict_sys_mutex),
                       ("autoinc_mutex", self.autoinc_mutex),
                       ("rseg_mutex", self.rseg_mutex), ("leaf_latch", self.leaf_latch),
                       ("index_lock", self.index_lock)):
            out[f"{key}.acquisitions"] = m.acquisitions
            out[f"{key}.contended"] = m.contended
            out[f"{key}.wait_s"] = m.wait_ns_total / 1e9
        return out
