set terminal pngcairo size 960,540 font ',10'
set output 'point_process.png'
set title 'Point read, one process per read (p50)'
set ylabel 'ms'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left
set xtics rotate by -20
set grid ytics
set logscale y
plot 'point_process.dat' using 2:xtic(1) title 'Vortex', 'point_process.dat' using 3:xtic(1) title 'Storyline (our Lance)', 'point_process.dat' using 4:xtic(1) title 'official Lance', 'point_process.dat' using 5:xtic(1) title 'DuckDB/Parquet'
set terminal svg size 960,540 dynamic
set output 'point_process.svg'
replot
