# sweep.gp - one figure of a sweep against its first parameter: the mean over the
# replications with its 95 % confidence interval as error bars, one line per value of
# the second parameter (when there is one). `kdsim sweep` and `kdsim merge` write the
# data into DIR/plots and run this script there.
#
# Inputs (-e): data (CSV blocks, one per line drawn, two blank lines apart; each block
# starts with the header x,label,<line name>,mean,lo,hi), out, title, ylabel, xlabel,
# nseries (blocks), xnumeric (1: x is the parameter's value; 0: its position, labelled).
load 'common.gp'
set title title
set xlabel xlabel
set ylabel ylabel
set key outside right top
if (!xnumeric) set xtics rotate by -30
set autoscale xfixmin
set offsets graph 0.03, graph 0.03, graph 0.05, 0
set yrange [0:*]
# Tics at the swept values, labelled as the sweep file wrote them.
cmd = "plot for [i=0:nseries-1] data index i using 1:4:5:6:xticlabels(2) with yerrorlines lw 1.5 pt 7 ps 0.7 title columnheader(3)"
load 'draw.gp'
