#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-docs.sh - the documentation keeps up with the tree:
#   - every option that `pme_info --help`, `pme_perf --help`, `pme_route --help`,
#     `pme_rawsock --help` and `maint/vcluster --help` print is in the tool's manual page
#     (and every vcluster subcommand);
#   - the manual pages have the conventional sections (pme(7), an overview: NAME,
#     DESCRIPTION, SEE ALSO), render without groff warnings, and are all installed by
#     `make install` (man_MANS in Makefile.am), but vcluster(1): its tool runs from the
#     source tree;
#   - every relative link in README.md and doc/*.md leads to a file that exists, and a link
#     to a heading (page.md#heading) to a heading that exists;
#   - the README's quick start is still the two commands maint/quickstart and maint/test,
#     and maint/test is still what CI runs (.ci/run).
# Runs as any user. The compiled tools come from $builddir (exported by run-tests.sh).
# pme-test: tier=default cpu=100 time=1
set -euo pipefail
src=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${builddir:-.}
man_dir=$src/doc/man
failures=0

fail() { printf 'FAIL: %s\n' "$*"; failures=$((failures + 1)); }

# man_text PAGE: the page's source with groff's escapes for '-' and fonts removed, so
# that an option reads as it does on the terminal.
man_text() { sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\f(..//g' -e 's/\\&//g' "$1"; }

# options_in_help TEXT: every option the help text names, one a line ("--peer", "-p").
options_in_help() {
    grep -oE -- '(^|[][ |,])--?[A-Za-z][A-Za-z0-9-]*' <<<"$1" | sed -E 's/^[][ |,]//' | sort -u
}

# check_options TOOL PAGE HELP-TEXT: the help names options, and the page names each.
check_options() {
    local tool=$1 page=$2 help=$3 opts opt text
    opts=$(options_in_help "$help")
    grep -q -- '^--' <<<"$opts" || { fail "$tool --help printed no long option: $help"; return; }
    text=$'\n'$(man_text "$page")$'\n'
    while read -r opt; do
        [[ $text =~ [^A-Za-z0-9-]$opt[^A-Za-z0-9-] ]] ||
            fail "$tool --help prints $opt, but ${page#"$src"/} does not describe it"
    done <<<"$opts"
}

check_tool_pages() {
    local tool help
    for tool in pme_info:1 pme_perf:1 pme_route:8 pme_rawsock:8; do
        local sec=${tool#*:}
        tool=${tool%:*}
        [ -x "$build/src/tools/$tool" ] || { fail "$build/src/tools/$tool is not built (run make)"; continue; }
        # pme_rawsock prints its usage on standard output, the others on standard error
        # with exit status 2.
        help=$("$build/src/tools/$tool" --help 2>&1 || true)
        check_options "$tool" "$man_dir/$tool.$sec" "$help"
    done
    help=$("$src/maint/vcluster" --help 2>&1) || fail "maint/vcluster --help exited with $?"
    check_options vcluster "$man_dir/vcluster.1" "$help"
    local sub page
    page=$'\n'$(<"$man_dir/vcluster.1")$'\n'
    for sub in $(sed -nE 's/^  ([a-z]+)( .*)?$/\1/p' <<<"$help"); do
        [[ $page =~ $'\n'\.BR?\ $sub[\ $'\n'] ]] ||
            fail "maint/vcluster --help lists subcommand $sub, but vcluster.1 has no entry for it"
    done
}

check_man_format() {
    local page sec re warnings text installed
    local sections=(NAME SYNOPSIS DESCRIPTION OPTIONS ENVIRONMENT FILES "EXIT STATUS" EXAMPLES "SEE ALSO")
    local overview=(NAME DESCRIPTION "SEE ALSO") want
    installed=$(awk '/^(dist_)?man_MANS *=/ { on = 1 } on { print; if (!/\\$/) exit }' "$src/Makefile.am")
    for page in "$man_dir"/*.[1-8]; do
        text=$'\n'$(<"$page")$'\n'
        if [[ $page == *.7 ]]; then want=("${overview[@]}"); else want=("${sections[@]}"); fi
        for sec in "${want[@]}"; do
            re=$'\n''\.SH "?'"$sec"'"?'$'\n'
            [[ $text =~ $re ]] || fail "${page#"$src"/} has no $sec section"
        done
        [[ $installed == *"doc/man/${page##*/}"* || ${page##*/} == vcluster.1 ]] ||
            fail "${page#"$src"/} is not in man_MANS of Makefile.am: make install leaves it out"
        if command -v groff >/dev/null; then
            warnings=$(groff -man -ww -z "$page" 2>&1) || fail "groff could not render ${page#"$src"/}"
            [ -z "$warnings" ] || fail "groff warns about ${page#"$src"/}: $warnings"
        fi
    done
}

# md_links FILE: "LINE TARGET" for every link and image outside code, and
# md_anchors FILE: the anchor of every heading, as GitHub makes them.
md_links() {
    awk '/^ *(```|~~~)/ { code = !code; next }
         !code { line = $0; gsub(/`[^`]*`/, "", line)
                 while (match(line, /\]\([^) ]+/)) {
                     print FNR, substr(line, RSTART + 2, RLENGTH - 2)
                     line = substr(line, RSTART + RLENGTH) } }' "$1"
}
md_anchors() {
    LC_ALL=C awk '/^ *(```|~~~)/ { code = !code; next }
         !code && /^#+ / { h = $0; sub(/^#+ +/, "", h); sub(/ +#+ *$/, "", h)
                 gsub(/\]\([^)]*\)/, "", h)
                 h = tolower(h); gsub(/[^a-z0-9 _-]/, "", h); gsub(/ /, "-", h)
                 n = seen[h]++; print (n ? h "-" n : h) }' "$1"
}

# anchors_of FILE: md_anchors, read once per file.
declare -A anchors_cache
anchors_of() {
    [ -n "${anchors_cache[$1]+set}" ] || anchors_cache[$1]=$(md_anchors "$1")
    REPLY=${anchors_cache[$1]}
}

check_links() {
    local md line target path anchor dir
    for md in "$src/README.md" "$src"/doc/*.md; do
        [ -f "$md" ] || continue
        dir=$(dirname "$md")
        while read -r line target; do
            [[ $target =~ ^[a-zA-Z][a-zA-Z0-9+.-]*: ]] && continue # http:, mailto: ...
            path=${target%%#*} anchor=
            [[ $target == *'#'* ]] && anchor=${target#*#}
            if [ -z "$path" ]; then path=$md; else path=$dir/$path; fi
            if [ ! -e "$path" ]; then
                fail "${md#"$src"/}:$line links to $target, which does not exist"
            elif [ -n "$anchor" ] && [[ $path == *.md ]] && anchors_of "$path" &&
                [[ $'\n'$REPLY$'\n' != *$'\n'"$anchor"$'\n'* ]]; then
                fail "${md#"$src"/}:$line links to $target, but ${path#"$src"/} has no such heading"
            fi
        done < <(md_links "$md")
    done
}

check_quick_start() {
    local section commands
    section=$(awk '/^## / { on = ($0 ~ /^## Quick start/) } on' "$src/README.md")
    commands=$(awk '/^```/ { n++; next } n == 1 && NF' <<<"$section")
    [ "$commands" = $'maint/quickstart\nmaint/test' ] ||
        fail "README's quick start should be exactly the commands maint/quickstart and maint/test; it shows: ${commands:-nothing}"
    [ -x "$src/maint/quickstart" ] && [ -x "$src/maint/test" ] ||
        fail "maint/quickstart or maint/test, named by the README's quick start, is missing"
    grep -q 'maint/test' "$src/.ci/run" || fail ".ci/run no longer runs maint/test, as the README says it does"
    grep -q '\.ci/run' <<<"$section" || fail "README's quick start no longer says that CI runs maint/test via .ci/run"
}

check_tool_pages
check_man_format
check_links
check_quick_start
if [ "$failures" -gt 0 ]; then
    echo "$failures problem(s) in the documentation"
    exit 1
fi
if ! command -v groff >/dev/null; then
    echo "everything else checked; groff is missing, so the manual pages were not rendered (apt-get install groff-base)"
    exit 77
fi
echo "documentation consistent: options, manual pages, links, quick start"
