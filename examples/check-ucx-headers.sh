#!/bin/bash
#
# check-ucx-headers.sh PREFIX WORKDIR: a program written for UCX 1.13 may
# use what a public header brings in without including it (ucs_list_*
# reached through uct.h alone). For each header below, this compares the
# ucs/ and uct/ headers that including it makes visible, as gcc -M lists
# them, in openuct's install (PREFIX/include) and in Debian 12's
# libucx-dev (unpacked into WORKDIR/ucx-dev by ucx-lib.sh, never
# installed). Every header UCX's set holds must be in openuct's; openuct
# may bring in more. Then it compiles one program that includes uct.h
# alone and uses the list, linear-function, statistics and topology types
# through it, against both trees; and one that takes the address of every
# function UCX 1.13's uct.h declares (the list is taken from UCX's header
# at run time), linked with openuct; and compares the values of UCX
# 1.13's UCT_ enumerators in both trees.
#
# Used by "make installcheck". Exits non-zero with a message on failure.
set -u -o pipefail
export LC_ALL=C # sort and join agree on the order

prog=check-ucx-headers
fail_count=0

# shellcheck source-path=SCRIPTDIR source=ucx-lib.sh
. "$(dirname "$0")/ucx-lib.sh"
ucx_args "$@"

[ -f "$prefix/include/uct/api/uct.h" ] ||
    die "no $prefix/include/uct/api/uct.h; run make install first"
cc=${CC:-cc}

ucx_deb_unpack "$work"
ucx_inc=$ucx_unpacked/usr/include
echo "$prog: UCX headers from $ucx_version"

# visible INCDIR HEADER: the ucs/ and uct/ headers under INCDIR that a
# file including HEADER reads, one path per line, relative to INCDIR
visible() {
    local inc=$1 header=$2 src=$work/visible.c
    printf '#include <%s>\n' "$header" >"$src"
    "$cc" -M -I"$inc" "$src" 2>"$work/visible.log" |
        tr ' \\' '\n\n' | grep -F "$inc/" | sed "s|^$inc/||" |
        grep -E '^uc[st]/' | sort -u || {
        cat "$work/visible.log" >&2
        return 1
    }
}

# The headers a UCT program includes; each must exist in both trees
for header in uct/api/uct.h uct/api/uct_def.h uct/api/version.h; do
    [ -f "$ucx_inc/$header" ] || die "libucx-dev has no $header"
    if [ ! -f "$prefix/include/$header" ]; then
        fail "$header: UCX installs it, openuct does not"
        continue
    fi
    theirs=$(visible "$ucx_inc" "$header") ||
        die "$header does not preprocess against UCX's headers"
    ours=$(visible "$prefix/include" "$header") ||
        die "$header does not preprocess against $prefix/include"
    [ -n "$theirs" ] || die "gcc -M listed no UCX header for $header"
    missing=$(comm -23 <(printf '%s\n' "$theirs") <(printf '%s\n' "$ours"))
    if [ -n "$missing" ]; then
        fail "including $header makes visible in UCX 1.13 but not in" \
            "openuct: $(echo $missing)"
    else
        echo "PASS $header: all $(printf '%s\n' "$theirs" | wc -l) ucs/uct" \
            "headers UCX's makes visible, openuct's does too" \
            "($(printf '%s\n' "$ours" | wc -l) in all)"
    fi
done

# A program that includes uct.h alone and uses what it brings in
src=$work/uct-h-alone.c
cat >"$src" <<'C'
#include <uct/api/uct.h>

typedef struct {
    ucs_list_link_t link;
    int value;
} elem_t;

int main(void)
{
    ucs_list_link_t head;
    elem_t a = {.value = 1}, b = {.value = 2}, *e;
    ucs_linear_func_t f = {.c = 1.0, .m = 2.0};
    ucs_stats_node_t *node = NULL;
    ucs_sys_device_t dev = UCS_SYS_DEVICE_ID_UNKNOWN;
    int sum = 0;

    ucs_list_head_init(&head);
    ucs_list_add_tail(&head, &a.link);
    ucs_list_add_tail(&head, &b.link);
    ucs_list_for_each(e, &head, link) {
        sum += e->value;
    }
    return !((sum == 3) && (ucs_list_length(&head) == 2) &&
             (f.c + f.m * 2 == 5.0) && (node == NULL) &&
             (dev == UCS_SYS_DEVICE_ID_UNKNOWN));
}
C
for tree in "UCX 1.13:$ucx_inc" "openuct:$prefix/include"; do
    name=${tree%%:*}
    inc=${tree#*:}
    if "$cc" -std=gnu11 -Wall -Werror -fsyntax-only -I"$inc" "$src" \
        2>"$work/alone.log"; then
        echo "PASS a program using ucs_list_*, ucs_linear_func_t," \
            "ucs_stats_node_t and ucs_sys_device_t through uct.h alone" \
            "compiles against $name"
    else
        cat "$work/alone.log" >&2
        fail "a program using ucs_list_* through uct.h alone does not" \
            "compile against $name ($inc)"
    fi
done

# Every function UCX 1.13's uct.h declares or defines inline, by name,
# taken by address in one program linked with openuct: it must compile
# against openuct's headers and link with -luct -lucs alone
printf '#include <uct/api/uct.h>\n' >"$work/ucx-uct.c"
funcs=$("$cc" -E -P -I"$ucx_inc" "$work/ucx-uct.c" 2>"$work/funcs.log" |
        tr '\n' ' ' | grep -oE '\buct_[a-z0-9_]+ *\(' | sed 's/ *($//' |
        sort -u) || {
    cat "$work/funcs.log" >&2
    die "UCX's uct.h does not preprocess"
}
nfuncs=$(printf '%s\n' "$funcs" | grep -c .)
[ "$nfuncs" -ge 90 ] ||
    die "found only $nfuncs functions in UCX's uct.h; the extraction is broken"
src=$work/ucx-functions.c
{
    echo '#include <uct/api/uct.h>'
    echo '#include <stdio.h>'
    echo 'typedef void (*any_func_t)(void);'
    echo 'static any_func_t funcs[] = {'
    printf '    (any_func_t)%s,\n' $funcs
    echo '};'
    echo 'int main(void)'
    echo '{'
    echo '    unsigned i, n = 0;'
    echo '    for (i = 0; i < sizeof(funcs) / sizeof(funcs[0]); ++i) {'
    echo '        n += (funcs[i] != NULL);'
    echo '    }'
    echo '    printf("%u\n", n);'
    echo '    return 0;'
    echo '}'
} >"$src"
if "$cc" -std=gnu11 -I"$prefix/include" "$src" -o "$work/ucx-functions" \
    -L"$libdir" -Wl,-rpath,"$libdir" -luct -lucs 2>"$work/functions.log"; then
    linked=$("$work/ucx-functions")
    if [ "$linked" = "$nfuncs" ]; then
        echo "PASS all $nfuncs functions of UCX 1.13's uct.h compile and" \
            "link against openuct"
    else
        fail "the program over UCX 1.13's $nfuncs functions saw $linked"
    fi
else
    missing=$(grep -oE ".uct_[a-z0-9_]+. undeclared|undefined reference to .uct_[a-z0-9_]+" \
        "$work/functions.log" | grep -oE 'uct_[a-z0-9_]+' | sort -u)
    fail "functions of UCX 1.13's uct.h that openuct lacks:" \
        "$(echo ${missing:-see $work/functions.log})"
fi

# Every UCT_ enumerator of UCX 1.13's uct.h, with UCX's value: printed by
# one program built against each tree (constants only, nothing linked).
# An end marker (*_LAST) may be larger, where a later UCX release added
# members that openuct has too.
names=$("$cc" -E -P -I"$ucx_inc" "$work/ucx-uct.c" 2>/dev/null | tr '\n' ' ' |
        grep -oE 'enum[^{;]*\{[^}]*\}' | sed -E 's/^enum[^{]*\{//; s/\}$//' |
        tr ',' '\n' | sed -nE 's/^ *(UCT_[A-Z0-9_]+).*/\1/p' | sort -u)
nnames=$(printf '%s\n' "$names" | grep -c .)
[ "$nnames" -ge 100 ] ||
    die "found only $nnames enumerators in UCX's uct.h; the extraction is broken"
src=$work/ucx-values.c
{
    echo '#include <uct/api/uct.h>'
    echo '#include <stdio.h>'
    echo 'int main(void)'
    echo '{'
    for n in $names; do
        printf '    printf("%%s %%lld\\n", "%s", (long long)(%s));\n' "$n" "$n"
    done
    echo '    return 0;'
    echo '}'
} >"$src"
rm -f "$work"/values-*.txt
for tree in "ucx:$ucx_inc" "ours:$prefix/include"; do
    "$cc" -std=gnu11 -I"${tree#*:}" "$src" -o "$work/values-${tree%%:*}" \
        2>"$work/values-${tree%%:*}.log" || {
        missing=$(grep -oE ".UCT_[A-Z0-9_]+. undeclared" \
            "$work/values-${tree%%:*}.log" | grep -oE 'UCT_[A-Z0-9_]+' |
            sort -u)
        fail "enumerators of UCX 1.13's uct.h that ${tree%%:*} lacks:" \
            "$(echo ${missing:-see $work/values-${tree%%:*}.log})"
        continue
    }
    "$work/values-${tree%%:*}" >"$work/values-${tree%%:*}.txt"
done
if [ -s "$work/values-ours.txt" ] && [ -s "$work/values-ucx.txt" ]; then
    differ=$(join "$work/values-ucx.txt" "$work/values-ours.txt" |
        awk '$2 != $3 && !($1 ~ /_LAST$/ && $3 > $2) {
                 printf "%s (UCX %s, openuct %s) ", $1, $2, $3 }')
    if [ -n "$differ" ]; then
        fail "enumerators whose value differs from UCX 1.13's: $differ"
    else
        echo "PASS all $nnames UCT_ enumerators of UCX 1.13's uct.h have" \
            "UCX's values in openuct (end markers may be larger)"
    fi
fi

[ "$fail_count" -eq 0 ] || die "$fail_count check(s) failed"
echo "$prog: all checks passed"
