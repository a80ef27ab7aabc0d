# draw.gp - renders the plot held in the string `cmd` twice: out.png and out.svg.
# The scripts in plots/ load it last, once `cmd` is set.
if (pngterm eq 'pngcairo') {
    set terminal pngcairo size width,height font 'sans-serif,10' noenhanced background '#ffffff'
} else {
    set terminal png size width,height noenhanced background '#ffffff'
}
set output out.'.png'
eval cmd
set terminal svg size width,height font 'sans-serif,12' noenhanced background '#ffffff'
set output out.'.svg'
eval cmd
set output
