# capacity.gp - the stream's open shards over time against the records written and
# throttled. The right axis is the left one times a shard's write capacity in records/s,
# so the open-shard line is also the stream's write capacity: the records budget, or the
# byte budget at the run's mean record size when that binds first (large records).
#
# Inputs (-e): data (CSV: minute,open_shards,records_in_per_s,write_throttled_per_s),
# out, budget (records/s per shard), basis (for the title: "" or why bytes set it), ymax (top of
# the left axis, shards), xdiv, xunit, xmax, npoints.
load 'common.gp'
set title sprintf('Open shards and writes per minute (a shard: %.0f records/s%s)', budget, basis)
set xlabel sprintf('time since the start (%s)', xunit)
set ylabel 'open shards'
set y2label 'records/s'
set yrange [0:ymax]
set link y2 via y*budget inverse y/budget
set y2tics
set key outside right top vertical
# Open shards are a step per minute, [m, m + 1): steps join the minutes, and a segment per
# minute carries the last one to the end of the run.
cmd = "plot data skip 1 using ($1/xdiv):2 with steps lw 2.5 lc rgb '#404040' title 'open shards = capacity', '' skip 1 using ($1/xdiv):2:(1.0/xdiv):(0) with vectors nohead lw 2.5 lc rgb '#404040' notitle, '' skip 1 using (xmid($1)):3 axes x1y2 with ".lstyle." lw 1.5 lc rgb '#1f5fbf' title 'records written/s', '' skip 1 using (xmid($1)):4 axes x1y2 with ".lstyle." lw 1.5 lc rgb '#c0392b' title 'records throttled/s'"
load 'draw.gp'
