#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# render.sh DIR - tables, plots and the benchmark page from a bench.sh
# results directory
#
#   render.sh DIR               writes DIR/summary.txt (text tables, also
#                               printed), DIR/tables.rst, DIR/bench-*.png
#                               and DIR/benchmark.rst
#   render.sh --doc DIR DOCDIR  copies DIR/benchmark.rst to
#                               DOCDIR/benchmark.rst and the plots to
#                               DOCDIR/images/
#
# Inputs: DIR/results.txt (RESULT lines), DIR/*.csv, DIR/meta.txt,
# DIR/walls.txt.  The page is tools/bench/benchmark.rst.in with the
# tables, the comparison with the paper and the run's facts filled in.
set -eu
shopt -s inherit_errexit

HERE=$(cd "$(dirname "$0")" && pwd)
readonly HERE
PLOT=

die() { echo "render: $*" >&2; exit 1; }

cleanup()
{
	[[ -z $PLOT ]] || rm -rf "$PLOT"
}
trap cleanup EXIT

tables()
{
	local out=$1

	: > "$out/summary.txt"
	: > "$out/tables.rst"
	awk -v txt="$out/summary.txt" -v rst="$out/tables.rst" -v walls="$out/walls.txt" \
		-f "$HERE/render_tables.awk" "$out/results.txt"
	cat "$out/summary.txt"
}

# split the CSVs into one data file per series for gnuplot: $PLOT/NAME.dat
split_series()
{
	local out=$1

	PLOT=$(mktemp -d /tmp/bench-plot.XXXXXX)
	awk -v dir="$PLOT" -f "$HERE/render_split.awk" "$out/results.txt" "$out"/*.csv
}

# gnuplot_png FILE: run the gnuplot script on stdin into FILE
gnuplot_png()
{
	{
		echo "set terminal pngcairo size 1200,800 font 'sans,10'"
		echo "set output '$1'"
		echo "set datafile separator ' '"
		cat
	} | gnuplot || die "gnuplot failed for $1"
}

# series KIND N [USING]: gnuplot "plot" clauses, one per algorithm with
# data; USING the columns (default 1:2; a CDF is drawn value by percentile
# with 2:1)
series()
{
	local kind=$1 n=$2 using=${3:-1:2} a sep=""

	for a in dctcp-ours dctcp-intree dctcp-reno cubic-ecn reno-ecn cubic-noecn; do
		[[ -s $PLOT/$kind-$a-$n.dat ]] || continue
		printf "%s'%s' using %s with lines title '%s'" "$sep" "$PLOT/$kind-$a-$n.dat" "$using" "$a"
		sep=", "
	done
	echo
}

plots()
{
	local out=$1 s a

	for s in queue 10g; do
		[[ -n $(series "$s-queue_cdf" 2) ]] || continue
		gnuplot_png "$out/bench-$s.png" <<-EOF
			set multiplot layout 2,2 title 'scenario $s: bottleneck queue and TCP RTT'
			set grid
			set title 'backlog over time, 2 flows'
			set xlabel 'ms'
			set ylabel 'bytes'
			set logscale y
			plot $(series "$s-queue_ts" 2)
			set title 'backlog CDF, 2 and 19 flows'
			set xlabel 'bytes'
			set ylabel 'percentile'
			set logscale x
			unset logscale y
			set key right bottom
			plot $(series "$s-queue_cdf" 2 2:1), $(series "$s-queue_cdf" 19 2:1 | sed "s/title '\([^']*\)'/title '\1, 19' dashtype 2/g")
			set title 'TCP RTT CDF (1-byte request/response), 2 flows'
			set xlabel 'us'
			plot $(series "$s-rtt_cdf" 2 2:1)
			set title 'TCP RTT CDF, 19 flows'
			plot $(series "$s-rtt_cdf" 19 2:1)
			unset multiplot
		EOF
	done

	if [[ -n $(series incast_rtos 0) ]]; then
		gnuplot_png "$out/bench-incast.png" <<-EOF
			set multiplot layout 1,2 title 'incast: 1 MB per query over N synchronized senders, 100-packet buffer'
			set grid
			set key left top
			set xlabel 'senders'
			set title 'RTO timeouts over all queries'
			plot $(series incast_rtos 0 | sed 's/with lines/with linespoints/g')
			set title 'query completion time p99 (ms)'
			set logscale y
			plot $(series incast_qct99 0 | sed 's/with lines/with linespoints/g')
			unset multiplot
		EOF
	fi

	if ls "$PLOT"/conv-*-0.dat > /dev/null 2>&1; then
		{
			echo "set multiplot layout 2,3 title 'convergence: 5 flows joining and leaving, per-flow goodput (20 ms bins)'"
			echo "set grid"
			echo "set xlabel 's'"
			echo "set ylabel 'Mbit/s'"
			echo "set yrange [0:1000]"
			for a in dctcp-ours dctcp-intree dctcp-reno cubic-ecn reno-ecn cubic-noecn; do
				[[ -s $PLOT/conv-$a-0.dat ]] || continue
				echo "set title '$a'"
				printf "plot "
				for f in 0 1 2 3 4; do
					printf "%s'%s' using 1:2 with lines title 'flow %d'" \
						"$([[ $f == 0 ]] || echo ", ")" "$PLOT/conv-$a-$f.dat" "$f"
				done
				echo
			done
			echo "unset multiplot"
		} | gnuplot_png "$out/bench-converge.png"
	fi

	if ls "$PLOT"/alpha-*.dat > /dev/null 2>&1; then
		{
			echo "set grid"
			echo "set title 'alpha while RED''s K changes (one flow, 1 Gbit/s)'"
			echo "set xlabel 'ms'"
			echo "set ylabel 'alpha (1/1024)'"
			echo "set y2label 'K (bytes)'"
			echo "set y2tics"
			printf "plot "
			sep=""
			for a in dctcp-ours dctcp-intree; do
				[[ -s $PLOT/alpha-$a.dat ]] || continue
				printf "%s'%s' using 1:2 with lines title '%s alpha'" "$sep" "$PLOT/alpha-$a.dat" "$a"
				sep=", "
			done
			for a in dctcp-ours dctcp-intree; do
				[[ -s $PLOT/alpha-$a.dat ]] || continue
				printf ", '%s' using 1:3 with lines lw 2 title 'fluid model', '%s' using 1:4 axes x1y2 with lines dashtype 2 title 'K'" \
					"$PLOT/alpha-$a.dat" "$PLOT/alpha-$a.dat"
				break
			done
			echo
		} | gnuplot_png "$out/bench-alpha.png"
	fi
}

# the page: the template with the tables and the run's facts
page()
{
	local out=$1

	awk -v tables="$out/tables.rst" -v meta="$out/meta.txt" -v results="$out/results.txt" \
		-f "$HERE/render_page.awk" "$HERE/benchmark.rst.in" > "$out/benchmark.rst"
}

doc()
{
	local out=$1 docdir=$2 png

	[[ -s $out/benchmark.rst ]] || die "$out/benchmark.rst missing: render $out first"
	mkdir -p "$docdir/images"
	install -m 0644 "$out/benchmark.rst" "$docdir/benchmark.rst"
	for png in "$out"/bench-*.png; do
		[[ -e $png ]] && install -m 0644 "$png" "$docdir/images/"
	done
	echo "render: $docdir/benchmark.rst and $docdir/images/ updated from $out"
}

main()
{
	local out

	if [[ ${1:-} == --doc ]]; then
		doc "${2:?usage: render.sh --doc DIR DOCDIR}" "${3:?usage: render.sh --doc DIR DOCDIR}"
		return
	fi
	out=${1:?usage: render.sh DIR}
	[[ -s $out/results.txt ]] || die "$out/results.txt missing or empty"
	command -v gnuplot > /dev/null || die "gnuplot missing: apt-get install gnuplot-nox"
	tables "$out"
	split_series "$out"
	plots "$out"
	page "$out"
}

main "$@"
