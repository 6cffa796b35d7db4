set terminal pngcairo size 960,540 font ',10'
set output 'sync_cost.png'
set title 'Incremental sync against a full build, by the share of documents changed'
set ylabel '% of the full build'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left
set xtics rotate by -20
set grid ytics
set yrange [0:*]
plot 'sync_cost.dat' using 2:xtic(1) title 'time, 1 % (costliest round)', 'sync_cost.dat' using 3:xtic(1) title 'time, 5 %', 'sync_cost.dat' using 4:xtic(1) title 'time, 20 %', 'sync_cost.dat' using 5:xtic(1) title 'bytes written, 1 %', 'sync_cost.dat' using 6:xtic(1) title 'bytes written, 5 %', 'sync_cost.dat' using 7:xtic(1) title 'bytes written, 20 %'
set terminal svg size 960,540 dynamic
set output 'sync_cost.svg'
replot
