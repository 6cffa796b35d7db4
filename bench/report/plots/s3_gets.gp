set terminal pngcairo size 960,540 font ',10'
set output 's3_gets.png'
set title 'GETs per point read on S3 (a process each)'
set ylabel 'GETs'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left
set xtics rotate by -20
set grid ytics
set logscale y
plot 's3_gets.dat' using 2:xtic(1) title 'Vortex cold', 's3_gets.dat' using 3:xtic(1) title 'Vortex warm (tail cache)', 's3_gets.dat' using 4:xtic(1) title 'official Lance as written', 's3_gets.dat' using 5:xtic(1) title 'official Lance compacted + BTree'
set terminal svg size 960,540 dynamic
set output 's3_gets.svg'
replot
