# SPDX-License-Identifier: GPL-2.0
#
# List the binary ("deb") archive entries of apt's sources, one line each:
#
#   URI SUITE SIGNED-BY
#
# Input: deb822 *.sources files and one-line *.list files (give the file
# names on the command line).  SIGNED-BY is "-" when an entry has none, and
# "inline" when the key is embedded in the entry (not usable by a private
# sources list).  Disabled deb822 entries (Enabled: no) are left out.

function flush(   t, s, u, nt, ns, nu, types, suites, uris, ok)
{
	if (!("uris" in f) || !("suites" in f)) {
		delete f
		return
	}
	if (tolower(f["enabled"]) == "no") {
		delete f
		return
	}
	nt = split(f["types"], types, " ")
	ok = 0
	for (t = 1; t <= nt; t++)
		if (types[t] == "deb")
			ok = 1
	if (ok) {
		nu = split(f["uris"], uris, " ")
		ns = split(f["suites"], suites, " ")
		for (u = 1; u <= nu; u++)
			for (s = 1; s <= ns; s++)
				print uris[u], suites[s], signed_by()
	}
	delete f
}

function signed_by()
{
	if (!("signed-by" in f))
		return "-"
	if (f["signed-by"] == "" || f["signed-by"] ~ /BEGIN PGP/)
		return "inline"
	return f["signed-by"]
}

# one-line format: deb [opt=val ...] URI SUITE COMPONENT...
function one_line(   i, n, kv, opts, key, sb)
{
	if ($1 != "deb")
		return
	sb = "-"
	i = 2
	if ($2 ~ /^\[/) {
		opts = ""
		for (; i <= NF; i++) {
			opts = opts " " $i
			if ($i ~ /\]$/)
				break
		}
		i++
		gsub(/[][]/, "", opts)
		n = split(opts, kv, " ")
		for (key = 1; key <= n; key++)
			if (kv[key] ~ /^signed-by=/)
				sb = substr(kv[key], 11)
	}
	print $i, $(i + 1), sb
}

FNR == 1 {
	flush()
	deb822 = FILENAME ~ /\.sources$/
	last = ""
}

/^[[:space:]]*#/ { next }

!deb822 {
	if (NF)
		one_line()
	next
}

/^[[:space:]]*$/ {
	flush()
	last = ""
	next
}

/^[[:space:]]/ {
	# continuation line: only an inline Signed-By key has them here
	if (last == "signed-by" && f[last] == "")
		f[last] = "BEGIN PGP"
	next
}

{
	key = tolower($0)
	sub(/:.*/, "", key)
	val = $0
	sub(/^[^:]*:[[:space:]]*/, "", val)
	sub(/[[:space:]]+$/, "", val)
	f[key] = val
	last = key
}

END { flush() }
