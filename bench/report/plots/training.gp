set terminal pngcairo size 960,540 font ',10'
set output 'training.png'
set title 'Training reads (our process)'
set ylabel 'MiB/s (SFT) / M tokens/s (RL)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left
set xtics rotate by -20
set grid ytics
set yrange [0:*]
plot 'training.dat' using 2:xtic(1) title 'SFT messages lines MiB/s', 'training.dat' using 3:xtic(1) title 'SFT C API (count) MiB/s', 'training.dat' using 4:xtic(1) title 'RL M completion tokens/s'
set terminal svg size 960,540 dynamic
set output 'training.svg'
replot
