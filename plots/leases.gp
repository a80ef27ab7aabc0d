# leases.gp - a KCL application's lease ownership over time: the leases (shards) each
# worker held at the end of each minute, stacked, a box over each minute, so that the
# bands' heights are the workers' shares and the top is the leases held: every lease of
# the table unless some are unowned, or one more while a stolen lease's old owner still
# holds it (until its next renewal fails). A band that thins to nothing is a worker
# whose leases were taken or stolen; a new band is a worker taking them.
#
# Inputs (-e): data (CSV: minute,<one column per worker>), out, name (the application),
# nworkers, xdiv, xunit, xmax, npoints, xstep (minutes per row: 1, or more for a long
# run, each row then the leases held at the end of its minutes).
load 'common.gp'
per = xstep == 1 ? 'minute' : sprintf('%d minutes', xstep)
set title sprintf('%s: leases held by each worker, per %s (stacked)', name, per)
set xlabel sprintf('time since the start (%s)', xunit)
set ylabel 'leases held (shards), stacked by worker'
set yrange [0:*]
set key outside right top
# Band i is drawn as the sum of columns 2..i, from the top down, each over the last;
# row m (its value is at its end) covers [m, m + xstep), the last one included.
top(i) = sum [c=2:i] column(c)
if (npoints <= 150) {
    # A box a row, parted by a white border.
    set style fill solid 0.8 border lc rgb '#ffffff'
    set boxwidth xstep * 1.0 / xdiv absolute
    cmd = "plot for [i=nworkers+1:2:-1] data using (xmid($1)):(top(i)) with boxes title columnheader(i)"
} else {
    # Past about 150 rows a box is a pixel or two wide: its border would paint it white
    # and neighbouring layers would blend at its edges. Filled steps from each row's
    # start draw the same bands without seams.
    set style fill solid 1.0 noborder
    cmd = "plot for [i=nworkers+1:2:-1] data using ($1/xdiv):(top(i)) with fillsteps title columnheader(i)"
}
load 'draw.gp'
