"""Database engines: InnoDB (redo log, binary log, commit protocols; buffer pool and
tablespaces for the scan experiments) and the CPU the server threads run on.

An engine sits between a workload's client threads and the filesystem layer: it turns
SQL statements into CPU bursts, lock waits and file writes / fsyncs.
"""
