# cost.gp - what the run's traffic would cost a month in each capacity mode, as stacked
# bars, one block per line item (the JSON report's cost section).
#
# Inputs (-e): data (CSV: mode,label,detail,<one column per line item>,total_usd;
# monthly USD), out, nitems (line-item columns).
load 'common.gp'
set title 'Cost per month in each capacity mode, by line item (USD)'
set ylabel 'USD per month'
set xlabel 'capacity mode' offset 0,-1.2
set style data histograms
set style histogram rowstacked
set boxwidth 0.6
set yrange [0:*]
set offsets 0, 0, graph 0.1, 0
set key outside right top vertical
set grid noxtics
# Line items get colours of their own: gnuplot's linetypes cycle after eight, and a
# palette shorter than the billing's item kinds (models/kds_billing.c: 16) made two items
# of one bar the same colour (acme-clickstream: efo_data_retrieval and
# commitment_shortfall_read, both green).
array colours[16] = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', \
                     '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac', '#1f3b5c', '#8c6d00', \
                     '#17becf', '#7f3c8d', '#a5d46a', '#8b0000']
colour(k) = colours[(k - 1) % |colours| + 1]
tick(a, b) = a."\n".b
cmd = "plot for [i=4:nitems+3] data using i:xtic(tick(strcol(2), strcol(3))) lc rgb colour(i - 3) title columnheader(i), '' skip 1 using 0:(column(nitems+4)):(sprintf('$%.2f', column(nitems+4))) with labels offset 0,1 notitle"
load 'draw.gp'
