"""Slot numbers of the HDD state vector ``S`` (see ``mech``): header parameters and
small mutable state at fixed slots, column layouts of the tables, and the extension
block appended after the tables (its offset at header slot ``O_EXT``) for parameters
added later. Constants only.
"""
# -- header slots ---------------------------------------------------------------------
P_REV, P_SURF, P_NZONE, P_NCYL, P_HS, P_SETTLE = 0, 1, 2, 3, 4, 5
P_OVH_RH, P_OVH_RM, P_OVH_WH, P_OVH_WM, P_OVH_FL = 6, 7, 8, 9, 10
P_BUS = 11          # ns per 512-byte sector on the host link
P_NSEG, P_SEGSEC, P_RAMAX, P_RAMIN = 12, 13, 14, 15   # sectors
P_WCE, P_WCMAX, P_QD, P_SPTF, P_AGE, P_NSECT, P_DCAP, P_DWIN = 16, 17, 18, 19, 20, 21, 22, 23
O_ZONE, O_SEEK, O_Q, O_SEG, O_DIRTY = 24, 25, 26, 27, 28
D_LAST_END, D_LAST_T = 29, 30   # the sector after the last media write's, when it was written
W_CTL = 31   # when the controller last finished taking in a write-through write's data
H_CYL, H_HEAD, Q_N = 32, 33, 34   # Q_N: commands queued
ST_ON, ST_LBA, ST_T, ST_STOP, ST_LO, ST_SEG, ST_MIN = 35, 36, 37, 38, 39, 40, 41
D_N, D_SECT, SEG_CLOCK = 42, 43, 44
C_SEEKS, C_DESTAGES, C_STREAM_HITS, C_SEG_HITS = 45, 46, 47, 48
H_TFREE = 50   # the arm is busy (a background destage) until this time
# per-command overheads (read hit, read miss, write hit, write miss) after a read and
# after a write; the set in force is copied into P_OVH_RH..P_OVH_WM
OVH_AFTER_READ, OVH_AFTER_WRITE, LAST_WRITE = 51, 55, 59
O_EXT = 60   # offset of the extension block (parameters added later, after the tables)
HEADER = 64

# -- extension block: S[int(S[O_EXT]) + X_*] ---------------------------------------------
X_RA_SCHEME = 0      # where read-ahead stops: RA_BYTES, RA_TRACK, RA_CYLINDER, RA_TRACK_STREAM
X_WINDOW_HITS = 1    # 1: a read starting in the not-yet-read part of the window waits for it
X_IDLE_HIT = 2       # 1: a hit on a segment whose read-ahead ended restarts the read-ahead
X_SERP = 3           # surface order: 0 forward, 1 reversed on odd cylinders of a zone, 2 on odd cylinders
X_O_ZSP = 4          # offset of the per-zone sparing rows (WCOLS each)
X_O_SLIP = 5         # offset of the slip rows (LCOLS each)
X_BUSW = 6           # ns per sector on the host link for write data
X_WATER = 7          # read data buffered (fraction) before the drive reconnects to send it
X_WATER_REQ = 8      # 1: the fraction is of min(request, segment), 0: of the segment
X_OVH_RESEL = 9      # reconnecting to the host after a disconnect (read miss data, write status)
X_OVH_PREP = 10      # before each data transfer
X_OVH_RCOMP = 11     # completion (status) of a read
X_OVH_WCOMP = 12     # completion (status) of a write
X_MINSEEK = 13       # a media write positions for at least this long
X_WRITE_HITS = 14    # 1: reads hit on sectors held from a write
X_FREE_BLOCKS = 15   # 1: after a seek the head buffers the track's sectors passing before the read
X_ZERO_LAT = 16      # 1: a read miss landing inside its first track's sectors reads them on arrival
X_ZERO_LAT_W = 17    # 1: a media write whose data is all buffered writes them on arrival
X_COMBINE = 18       # 1: a queued media write appending to the one being written continues it
EXT_LEN = 32
RA_BYTES, RA_TRACK, RA_CYLINDER, RA_TRACK_STREAM = 0, 1, 2, 3
RA_SCHEMES = {"bytes": RA_BYTES, "track": RA_TRACK, "cylinder": RA_CYLINDER,
              "track_stream": RA_TRACK_STREAM}
SURFACE_ORDERS = {"forward": 0, "alternate_in_zone": 1, "alternate": 2}

ZCOLS = 8
Z_LBA0, Z_CYL0, Z_CYL1, Z_SPT, Z_TSKEW, Z_CSKEW, Z_OFF, Z_END = range(8)
# per-zone sparing (extension block): physical sectors before the first LBA; LBAs and
# physical sectors per sparing range (0 = the zone is one range); first slip row and
# number of slip rows
WCOLS = 5
W_FRONT, W_RLBA, W_RPHYS, W_SLIP0, W_NSLIP = range(5)
# slip rows, sorted by start within a zone: skipped run [start, start + len) of
# zone-relative physical sectors; T = start - range base - CUM (the smallest in-range
# LBA position the run pushes on); CUM = sectors skipped by earlier runs of its range
LCOLS = 4
L_START, L_LEN, L_T, L_CUM = range(4)
QCOLS = 12
Q_LBA, Q_NS, Q_OP, Q_FUA, Q_T, Q_CYL, Q_HEAD, Q_ANG, Q_HIT, Q_HIT0, Q_SEQ, Q_CAND = range(12)
Q_SEQCTR = 49   # header slot: arrival counter (queue order)
SEGCOLS = 3
G_START, G_END, G_STAMP = range(3)
DCOLS = 2

OP_READ, OP_WRITE, OP_FLUSH, OP_DISCARD = 0, 1, 2, 3
EPS_NS = 1.0   # a sector reached up to 1 ns "late" (float rounding) counts as on time
