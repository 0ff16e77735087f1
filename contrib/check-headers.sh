#!/bin/bash
# Compiles every installed header on its own, as C11 and as C++11, with
# warnings as errors. Usage: check-headers.sh PREFIX
set -u
prefix=${1:?usage: $0 PREFIX}
cc=${CC:-cc}
cxx=${CXX:-c++}
inc="$prefix/include"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

failed=0
count=0
for h in $(cd "$inc" && find ucs uct ucm -name '*.h' | sort); do
    count=$((count + 1))
    printf '#include <%s>\nint openuct_header_check;\n' "$h" > "$tmp/t.c"
    cp "$tmp/t.c" "$tmp/t.cc"
    if ! "$cc" -std=c11 -Wall -Wextra -Werror -I"$inc" -c "$tmp/t.c" \
            -o "$tmp/t.o" 2> "$tmp/err"; then
        echo "check-headers: $h does not compile alone as C11:"
        head -5 "$tmp/err"
        failed=$((failed + 1))
    fi
    if ! "$cxx" -std=c++11 -Wall -Wextra -Werror -I"$inc" -c "$tmp/t.cc" \
            -o "$tmp/t.o" 2> "$tmp/err"; then
        echo "check-headers: $h does not compile alone as C++11:"
        head -5 "$tmp/err"
        failed=$((failed + 1))
    fi
done

if [ "$count" -eq 0 ]; then
    echo "check-headers: no headers found under $inc"
    exit 1
fi
if [ "$failed" -ne 0 ]; then
    echo "check-headers: $failed failure(s) in $count headers"
    exit 1
fi
echo "check-headers: $count installed headers compile alone as C11 and C++11"
