# common.gp - the look shared by every kdsim plot; each script in plots/ loads it first.
#
# kdsim runs the scripts from the run's DIR/plots folder, where it writes them together
# with their data, setting each script's inputs with -e (data file, output name, title
# words, axis units). This file sets the CSV format, the style, and `pngterm`: pngcairo,
# or plain png where gnuplot was built without cairo.
set datafile separator ','
set termoption noenhanced
set grid lc rgb '#d0d0d0'
set border lc rgb '#404040'
set key top left opaque box lc rgb '#c0c0c0'
set style fill solid 0.85 border -1
set tics nomirror
set autoscale xfix
# The time plots span the whole run (xmax: its end in x units), its last minute included;
# each minute's value is drawn at the middle of its minute (xmid), where it belongs, so a
# change inside minute m shows between m and m + 1, not a minute early. A last minute
# that the run's end cuts short is drawn at the middle of its part in the run: a run of
# 10 s puts its one minute at 5 s, inside the plot, where the minute's middle (30 s) would
# leave the plot without a point. A grid (a heat map) keeps whole cells (xcell).
if (exists('xmax') && xmax > 0) set xrange [0:xmax]
if (!exists('xstep')) xstep = 1
xcell(m) = (m + xstep / 2.0) / xdiv
xend(m) = exists('xmax') && xmax > 0 ? (m / xdiv + xmax) / 2.0 : xcell(m)
xmid(m) = xcell(m) < xend(m) ? xcell(m) : xend(m)
set xtics out
set ytics out
pngterm = strstrt(GPVAL_TERMINALS, 'pngcairo') > 0 ? 'pngcairo' : 'png'
# Few points draw as points on a line, so that a run of one or two minutes still shows.
if (!exists('npoints')) npoints = 100
lstyle = npoints < 20 ? 'linespoints pt 7 ps 0.6' : 'lines'
# A palette from white (idle) to dark red (at or over budget) for the heat maps.
set palette defined (0 '#ffffff', 0.25 '#ffe8a0', 0.6 '#f08030', 1 '#a00000')
if (!exists('width')) width = 900
if (!exists('height')) height = 480
# Numbers for labels: no decimals from 100 up, one below.
fmt(v) = v >= 100 ? sprintf('%.0f', v) : sprintf('%.1f', v)
