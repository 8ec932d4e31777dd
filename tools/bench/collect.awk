# SPDX-License-Identifier: GPL-2.0
#
# collect.awk: split the bench guest's output (DIR/raw.txt) into
# DIR/results.txt (the RESULT lines) and one DIR/NAME.csv per CSV block
# name (header once, then the rows of every block of that name).
#
#   awk -v out=DIR -f collect.awk DIR/raw.txt

BEGIN {
	printf "" > (out "/results.txt")
}

{
	sub(/\r$/, "")
}

/^RESULT / {
	print >> (out "/results.txt")
	next
}

/^CSV-BEGIN / {
	name = $2
	file = out "/" name ".csv"
	if (!(name in seen)) {
		print $3 > file
		seen[name] = 1
	}
	incsv = 1
	next
}

/^CSV-END / {
	incsv = 0
	next
}

incsv {
	print >> file
}
