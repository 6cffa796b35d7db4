set terminal pngcairo size 960,540 font ',10'
set output 'scans.png'
set title 'Narrow scans, warm p50 (lower is better)'
set ylabel 'ms'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left
set xtics rotate by -20
set grid ytics
set logscale y
plot 'scans.dat' using 2:xtic(1) title 'narrow_source Vortex', 'scans.dat' using 3:xtic(1) title 'narrow_source Lance', 'scans.dat' using 4:xtic(1) title 'narrow_source DuckDB', 'scans.dat' using 5:xtic(1) title 'narrow_function Vortex', 'scans.dat' using 6:xtic(1) title 'narrow_function Lance', 'scans.dat' using 7:xtic(1) title 'narrow_function DuckDB', 'scans.dat' using 8:xtic(1) title 'time_model Vortex', 'scans.dat' using 9:xtic(1) title 'time_model Lance', 'scans.dat' using 10:xtic(1) title 'time_model DuckDB'
set terminal svg size 960,540 dynamic
set output 'scans.svg'
replot
