#!/bin/bash
#
# Keeps the man pages true to the programs (make check in docs/man).
#
#   1. Every page formats without a single warning (groff -ww, and man -l
#      as a reader's man runs it), its .TH names the page's file, and
#      man-db can read its NAME section (lexgrog, what apropos uses).
#   2. For every tool page, every option the program's help lists (short
#      -x and long --name) is a tag (the line after .TP or .TQ) of the
#      page's OPTIONS section.
#   3. Every variable "uct_info -c" prints, run with no UCX_ variable and
#      no configuration file, appears in openuct(7) as NAME=DEFAULT.
#
# Usage: check-man.sh
# Environment (docs/man/Makefile.am sets it):
#   MAN_SRCDIR   the directory of the pages
#   MAN_PAGES    every page to check, as file names (uct_perftest.1 ...)
#   MAN_TOOLS    PAGE=PROGRAM pairs: the page of each program, and the
#                program as built, run with --help (or -h when it does not
#                know --help); a program that was not built is skipped
#   MAN_ENV_PAGE the page of the variables (openuct.7)
#   UCT_INFO     the uct_info program (skipped when it was not built)
#
# Exit status: 0 all good, 1 something is missing or wrong (each problem
# on one line, naming the page and the option or variable).

set -u

srcdir=${MAN_SRCDIR:-$(dirname "$0")}
env_page=${MAN_ENV_PAGE:-openuct.7}
failures=0

fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

indent() {
    printf '%s\n' "$1" | sed 's/^/    /' >&2
}

# The roff source of a page with its escapes reduced to plain text, one
# line per input line: font changes and zero-width escapes go, \- becomes
# -, quotes of macro arguments become spaces.
plain_roff() {
    sed -e 's/\\f[BIRP]//g' -e 's/\\f(..//g' -e 's/\\f\[[A-Z]*\]//g' \
        -e 's/\\[%&]//g' -e 's/\\-/-/g' -e 's/\\(mi/-/g' -e 's/"/ /g' "$1"
}

# 1. Formatting
check_format() {
    local page=$1 file=$srcdir/$1 name section th out

    if [ ! -r "$file" ]; then
        fail "$page: no such page in $srcdir"
        return
    fi

    name=${page%.*}
    section=${page##*.}
    th=$(sed -n 's/^\.TH  *\([^ ]*\)  *\([^ ]*\).*/\1 \2/p' "$file")
    if [ "$th" != "$(echo "$name" | tr '[:lower:]' '[:upper:]') $section" ]
    then
        fail "$page: .TH says '$th'; expected the page's name in capitals" \
             "and section $section"
    fi

    out=$(groff -man -Tutf8 -ww -z "$file" 2>&1)
    if [ -n "$out" ]; then
        fail "$page: groff -ww warns:"
        indent "$out"
    fi

    if ! out=$(MANWIDTH=80 man --warnings -l "$file" 2>&1 >/dev/null) ||
            [ -n "$out" ]; then
        fail "$page: man -l fails or warns:"
        indent "$out"
    fi

    if command -v lexgrog >/dev/null 2>&1 &&
            ! lexgrog "$file" >/dev/null 2>&1; then
        fail "$page: man-db cannot parse its NAME section (lexgrog)"
    fi
}

# The options a program's help lists: on each line whose first non-blank
# character is '-', the leading run of -x / --name words ("-h, --help").
help_options() {
    awk '/^[ \t]*-/ {
        sub(/^[ \t]+/, "")
        while (match($0, /^--?[A-Za-z0-9][A-Za-z0-9-]*/)) {
            print substr($0, 1, RLENGTH)
            $0 = substr($0, RLENGTH + 1)
            if (!sub(/^, */, "")) {
                break
            }
        }
    }' | sort -u
}

# The tags of the OPTIONS section of a page, one word per line
option_tags() {
    plain_roff "$1" | awk '
        /^\.SH/      { in_opts = ($2 == "OPTIONS"); next }
        !in_opts     { next }
        /^\.(TP|TQ)/ { tag = 1; next }
        tag          { tag = 0; gsub(/[,|\[\]()]/, " ")
                       for (i = 1; i <= NF; ++i) print $i }'
}

# 2. Options
check_tool() {
    local page=$1 prog=$2 help opt tags count=0

    if [ ! -x "$prog" ]; then
        echo "SKIP: $page: $prog was not built"
        return
    fi
    if [ ! -r "$srcdir/$page" ]; then
        fail "$page: no such page in $srcdir (the page of $prog)"
        return
    fi

    help=$("$prog" --help 2>/dev/null) || help=$("$prog" -h 2>/dev/null)
    if [ -z "$help" ] || ! echo "$help" | grep -q '^[[:space:]]*-'; then
        fail "$page: '$prog --help' and '$prog -h' print no options"
        return
    fi

    tags=$(option_tags "$srcdir/$page")
    for opt in $(echo "$help" | help_options); do
        count=$((count + 1))
        if ! echo "$tags" | grep -qxF -- "$opt"; then
            fail "$page: option $opt of $(basename "$prog")'s help is not" \
                 "a tag of the OPTIONS section (.TP, then" \
                 "'.B ${opt//-/\\-}' and its argument)"
        fi
    done
    echo "$page: $count options of $(basename "$prog") checked"
}

# 3. Variables
check_env() {
    local page=$srcdir/$env_page vars words var count=0

    if [ -z "${UCT_INFO:-}" ] || [ ! -x "$UCT_INFO" ]; then
        echo "SKIP: $env_page: uct_info was not built"
        return
    fi

    # the defaults: no UCX_ variable, no configuration file
    vars=$(env -i PATH="$PATH" HOME="${HOME:-/}" UCX_CONFIG_FILE= \
           "$UCT_INFO" -c) ||
        { fail "$env_page: '$UCT_INFO -c' failed"; return; }
    vars=$(echo "$vars" | grep '^UCX_[A-Z0-9_]*=')
    if [ -z "$vars" ]; then
        fail "$env_page: '$UCT_INFO -c' printed no UCX_ variable"
        return
    fi

    words=$(plain_roff "$page" | tr -s ' \t' '\n')
    while IFS= read -r var; do
        count=$((count + 1))
        if ! echo "$words" | grep -qxF -- "$var"; then
            if echo "$words" | grep -q "^${var%%=*}="; then
                fail "$env_page: ${var%%=*} has the default" \
                     "'${var#*=}' (uct_info -c), the page says" \
                     "'$(echo "$words" | grep -m1 "^${var%%=*}=" |
                         cut -d= -f2-)'"
            else
                fail "$env_page: ${var%%=*} (uct_info -c) is not" \
                     "documented; add '.B $var' with its meaning"
            fi
        fi
    done <<< "$vars"
    echo "$env_page: $count variables of uct_info -c checked"
}

for page in ${MAN_PAGES:-}; do
    check_format "$page"
done

for pair in ${MAN_TOOLS:-}; do
    check_tool "${pair%%=*}" "${pair#*=}"
done

check_env

if [ "$failures" -ne 0 ]; then
    echo "check-man: $failures problems" >&2
    exit 1
fi
echo "check-man: all pages good"
