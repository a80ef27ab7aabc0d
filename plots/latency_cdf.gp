# latency_cdf.gp - one consumer's latency distribution: the fraction of its records
# processed within x ms of being written (write time to end of processing), a CDF on a
# log scale, with the median and the 99th percentile marked.
#
# Inputs (-e): data (CSV: latency_ms,cumulative_fraction), out (output file name
# without extension), name (the consumer), p50 and p99 (ms), npoints (rows).
load 'common.gp'
set title sprintf('%s: latency from write to processing (cumulative distribution)', name)
set xlabel 'latency: write time to end of processing (ms, log scale)'
set ylabel 'fraction of records delivered'
set logscale x
set format x '%g'
# Less than three decades show 1-2-5 tics, which a log axis otherwise leaves unlabelled.
stats data skip 1 using 1 nooutput
if (STATS_min > 0 && STATS_max / STATS_min < 1000) {
    set xtics ()
    do for [e=-2:10] {
        do for [m in '1 2 5'] {
            v = real(m) * 10.0**e
            set xtics add (sprintf('%g', v) v)
        }
    }
}
set yrange [0:1.05]
set key bottom right
set arrow 1 from p50, graph 0 to p50, graph 1 nohead dt 2 lc rgb '#606060'
# A latency in the unit that reads best: ms below 10 s, then s below 3 h, then h.
dur(v) = v < 1e4 ? sprintf('%s ms', fmt(v)) : v < 3 * 3600e3 ? sprintf('%s s', fmt(v / 1e3)) \
         : sprintf('%s h', fmt(v / 3600e3))
set label 1 sprintf('p50 %s', dur(p50)) at p50, graph 0.25 left offset 0.5, 0
set arrow 2 from p99, graph 0 to p99, graph 1 nohead dt 2 lc rgb '#606060'
# The p99 label sits left of its line: p99 is often near the right edge.
set label 2 sprintf('p99 %s', dur(p99)) at p99, graph 0.12 right offset -0.5, 0
cmd = "plot data skip 1 using 1:2 with steps lw 2 lc rgb '#1f5fbf' title 'records processed within x ms'"
load 'draw.gp'
