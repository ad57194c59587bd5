# Sourced by the install scripts: find_mirror prints the first non-security Debian mirror
# this machine's apt configuration already uses (deb822 .sources files, then sources.list).
# The mirror is read at run time; no registry's host name is written into the repository.

find_mirror() {
    local f uri
    shopt -s nullglob
    for f in /etc/apt/sources.list.d/*.sources; do
        # deb822 stanzas are separated by blank lines; skip stanzas whose suites are security ones.
        uri=$(awk 'BEGIN { RS = ""; FS = "\n" }
            {
                u = ""; s = ""
                for (i = 1; i <= NF; i++) {
                    if ($i ~ /^URIs:/)   { u = $i; sub(/^URIs:[ \t]*/, "", u); split(u, a, /[ \t]+/); u = a[1] }
                    if ($i ~ /^Suites:/) { s = $i }
                }
                if (u != "" && s !~ /security/) { print u; exit }
            }' "$f")
        if [[ -n "$uri" ]]; then echo "$uri"; return 0; fi
    done
    if [[ -f /etc/apt/sources.list ]]; then
        uri=$(awk '$1 == "deb" {
                i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                if ($(i + 1) !~ /security/) { print $i; exit }
            }' /etc/apt/sources.list)
        if [[ -n "$uri" ]]; then echo "$uri"; return 0; fi
    fi
    return 1
}

# apt-get install on this machine (Debian 12), waiting for a lock another install holds.
apt_install() {
    export DEBIAN_FRONTEND=noninteractive
    apt-get -o DPkg::Lock::Timeout=600 update -qq
    apt-get -o DPkg::Lock::Timeout=600 install -y -qq "$@" >/dev/null
}
