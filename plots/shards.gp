# shards.gp - one per-shard measure over time: a line per shard, or a heat map (time
# across, shard down, colour for the value) when there are many shards. kdsim draws
# four of them: writes and reads as a percentage of each shard's budget, write-throttled
# records/s and read-throttled calls/s.
#
# Inputs (-e): data (CSV: minute,shard,shard_id,write_pct,read_pct,
# write_throttled_per_s,read_throttled_calls_per_s; NaN where the shard did not exist),
# out, col (the column to draw), what (title), unit (axis label of the value), budget
# (1: draw the 100 % budget line), heat (1: heat map), nshards, xdiv, xunit, xmax, xstep
# (minutes per row), npoints,
# cbmax (top of the colour scale; 0: automatic).
load 'common.gp'
set title what
set xlabel sprintf('time since the start (%s)', xunit)
if (heat) {
    set ylabel 'shard (index)'
    set yrange [-0.5:nshards-0.5]
    set cblabel unit
    if (cbmax > 0) { set cbrange [0:cbmax] } else { set cbrange [0:*] }
    set grid noxtics noytics
    set key off
    # A grid with holes is not an image: a shard that did not exist yet is drawn as 0.
    cmd = "plot data skip 1 using (xcell($1)):2:(column(col) == column(col) ? column(col) : 0) with image notitle"
    # One column (a run of a minute or less) gives an image no cell width: draw its cells
    # as boxes, cut at the run's end.
    if (npoints <= 1) {
        cmd = "plot data skip 1 using (xcell($1)):2:(xstep / 2.0 / xdiv):(0.5):(column(col) == column(col) ? column(col) : 0) with boxxyerror fill solid 1.0 noborder lc palette notitle"
    }
} else {
    set ylabel unit
    set yrange [0:*]
    set key outside right top
    cmd = "plot for [i=0:nshards-1] data skip 1 using ($2 == i ? xmid($1) : NaN):col with ".lstyle." lw 1.5 title sprintf('shard %d', i)"
    if (budget) {
        set offsets 0, 0, graph 0.08, 0
        cmd = cmd.", 100 with lines dt 2 lw 1.5 lc rgb '#000000' title 'budget (100 %)'"
    }
}
load 'draw.gp'
