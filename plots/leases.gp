# leases.gp - a KCL application's lease ownership over time: how many leases (shards)
# each worker held at the end of each minute. Workers taking, losing and stealing leases
# show as steps; a worker at zero is idle.
#
# Inputs (-e): data (CSV: minute,<one column per worker>), out, name (the application),
# nworkers, xdiv, xunit, npoints.
load 'common.gp'
set title sprintf('%s: leases held by each worker, per minute', name)
set xlabel sprintf('time since the start (%s)', xunit)
set ylabel 'leases held (shards)'
set yrange [0:*]
set ytics 1
set key outside right top
cmd = "plot for [i=2:nworkers+1] data using ($1/xdiv):i with steps lw 2 title columnheader(i)"
load 'draw.gp'
