set terminal pngcairo size 960,540 font ',10'
set output 'bytes.png'
set title 'Bytes on disk per corpus kind (x ATIF JSON)'
set ylabel 'bytes / JSON bytes'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left
set xtics rotate by -20
set grid ytics
set yrange [0:*]
plot 'bytes.dat' using 2:xtic(1) title 'Vortex', 'bytes.dat' using 3:xtic(1) title 'Storyline (our Lance)', 'bytes.dat' using 4:xtic(1) title 'official Lance', 'bytes.dat' using 5:xtic(1) title 'DuckDB/Parquet'
set terminal svg size 960,540 dynamic
set output 'bytes.svg'
replot
