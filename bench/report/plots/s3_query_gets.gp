set terminal pngcairo size 960,540 font ',10'
set output 's3_query_gets.png'
set title 'GETs per query on S3 (the §22.3 matrix, a cold process each)'
set ylabel 'GETs'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left
set xtics rotate by -20
set grid ytics
set logscale y
plot 's3_query_gets.dat' using 2:xtic(1) title 'chat-heavy', 's3_query_gets.dat' using 3:xtic(1) title 'tool-heavy', 's3_query_gets.dat' using 4:xtic(1) title 'dedup-heavy', 's3_query_gets.dat' using 5:xtic(1) title 'rl', 's3_query_gets.dat' using 6:xtic(1) title 'multi-agent', 's3_query_gets.dat' using 7:xtic(1) title 'pathological'
set terminal svg size 960,540 dynamic
set output 's3_query_gets.svg'
replot
