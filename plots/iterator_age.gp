# iterator_age.gp - one consumer's iterator age (how far behind the newest record it
# reads: GetRecords.IteratorAgeMilliseconds, the maximum of each minute) and the records
# it delivered per second, over time. A growing age is a reader falling behind.
#
# Inputs (-e): data (CSV: minute,iterator_age_ms_max,records_delivered_per_s), out,
# name (the consumer), xdiv and xunit (minutes per x unit, its name), xmax, ydiv and
# yunit (ms per y unit, its name), npoints (rows), agemax (the run's largest age, ms),
# xstep (minutes per row: 1, or more where a long run merged its minutes).
load 'common.gp'
per = xstep == 1 ? 'minute' : sprintf('%d minutes', xstep)
set title sprintf('%s: iterator age and records delivered, per %s', name, per)
set xlabel sprintf('time since the start (%s)', xunit)
set ylabel sprintf('iterator age, maximum of the %s (%s)', per, yunit)
set y2label 'records delivered (records/s)'
set y2tics
set yrange [0:*]
set y2range [0:*]
# The key goes under the x label: at the top left it hid the delivery line of a steady run.
set bmargin 6
set key at screen 0.5, screen 0.01 center bottom horizontal
# An age of 0 all run is the metric's "caught up" (every call reached the newest record),
# not a missing line: say so, since the latency can still be seconds.
if (agemax == 0) set label 1 'iterator age 0 all run: every call reached the newest record' at graph 0.02, graph 0.06 left
cmd = "plot data skip 1 using (xmid($1)):($2/ydiv) with ".lstyle." lw 2 lc rgb '#c0392b' title 'iterator age (left axis)', '' skip 1 using (xmid($1)):3 axes x1y2 with ".lstyle." lw 1.5 dt 2 lc rgb '#1f5fbf' title 'records delivered/s (right axis)'"
load 'draw.gp'
