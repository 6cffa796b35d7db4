set terminal pngcairo size 960,540 font ',10'
set output 'point_warm.png'
set title 'Warm point read latency (p50 / p95 / p99)'
set ylabel 'ms'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left
set xtics rotate by -20
set grid ytics
set logscale y
plot 'point_warm.dat' using 2:xtic(1) title 'Vortex p50', 'point_warm.dat' using 3:xtic(1) title 'Vortex p95', 'point_warm.dat' using 4:xtic(1) title 'Vortex p99', 'point_warm.dat' using 5:xtic(1) title 'Lance p50', 'point_warm.dat' using 6:xtic(1) title 'Lance p95', 'point_warm.dat' using 7:xtic(1) title 'Lance p99', 'point_warm.dat' using 8:xtic(1) title 'DuckDB p50', 'point_warm.dat' using 9:xtic(1) title 'DuckDB p95', 'point_warm.dat' using 10:xtic(1) title 'DuckDB p99'
set terminal svg size 960,540 dynamic
set output 'point_warm.svg'
replot
