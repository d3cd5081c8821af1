#!/usr/bin/env bash
# What the `#[taskflow]` macro costs a user's build: the release build of the examples crate's
# DSL flagship (examples/examples/moe_ffn_dsl.rs) against a control without taskflows.
#
#   hpmoe-macros/macro_cost.sh [RUNS [EXAMPLE]]   (default 7 runs of moe_ffn_dsl; run from
#                                                  anywhere in the repo)
#
# EXAMPLE names another example whose taskflows are `#[taskflow(..)]` functions at column 0
# (`moe_training_dsl`: the DeepSeek-V3 backward and training step). From the example it writes
# one example beside it per taskflow, and a control (all removed on exit):
#   __macro_cost_control   every taskflow function replaced by
#                          `fn NAME() -> Program { std::hint::black_box(None).expect("control") }`
#                          (rustc cannot see that it panics, so `main` is compiled whole, as
#                          with the taskflows: a visible panic would let it drop the rest of `main`)
#   __macro_cost_VARIANT   every taskflow but one replaced: the cost of that one. For the
#                          flagship the variants are `balanced` (`moe_ffn`), `natural`
#                          (`moe_ffn_natural`) and `int8` (`moe_ffn_int8`); for another
#                          example, the taskflow functions' names.
# Each is built once to warm the dependencies; then, RUNS times, each of the three in turn is
# touched and built (`cargo build --release -p hpmoe-examples --example NAME`), timed by wall
# clock and by CPU time (user + sys of cargo and rustc). The control is built in the same round
# as the others, so load from other processes hits both; the script prints the median of each
# and the median over rounds of (variant - control): the macro's cost, expansion and rustc's
# work on what it emits included. On a shared machine, trust the CPU figures more.
# Where the time goes inside the macro, stage by stage:
#   cargo test -p hpmoe-macros --release -- --ignored --nocapture expansion_time
set -euo pipefail
runs=${1:-7}
example=${2:-moe_ffn_dsl}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dir=examples/examples
src=$dir/$example.rs
# The example's taskflow functions, in order, and the variant that keeps each.
mapfile -t names < <(awk '/^#\[taskflow\(/ { getline; sub(/^pub fn /, ""); sub(/\(.*/, ""); print }' "$src")
[ "${#names[@]}" -ge 1 ] || { echo "$src has no #[taskflow] function at column 0" >&2; exit 1; }
label() { case "$1" in moe_ffn) echo balanced ;; moe_ffn_natural) echo natural ;; moe_ffn_int8) echo int8 ;; *) echo "$1" ;; esac; }
kept=()
for n in "${names[@]}"; do kept+=("$(label "$n")"); done
variants=(control "${kept[@]}")
timing=$(mktemp)
cleanup() {
    for v in "${variants[@]}"; do rm -f "$dir/__macro_cost_$v.rs"; done
    rm -f "$timing"
}
trap cleanup EXIT

# Replaces each `#[taskflow(..)]` function (attribute at column 0, `pub fn NAME() {`, body up
# to the first `}` at column 0) whose name is in STUB by a stub.
stub() {
    awk -v STUB="$1" '
        BEGIN { n = split(STUB, names, ","); for (i = 1; i <= n; i++) stub[names[i]] = 1 }
        skipping { if ($0 ~ /^}$/) skipping = 0; next }
        /^#\[taskflow\(/ { pending = $0; next }
        pending != "" {
            name = $0; sub(/^pub fn /, "", name); sub(/\(.*/, "", name)
            if (name in stub) { print "pub fn " name "() -> Program { std::hint::black_box(None).expect(\"control\") }"; skipping = 1 }
            else { print pending; print }
            pending = ""; next
        }
        { print }' "$src"
}
all=$(IFS=,; echo "${names[*]}")
stub "$all" > "$dir/__macro_cost_control.rs"
for i in "${!names[@]}"; do
    others=$(for j in "${!names[@]}"; do [ "$j" = "$i" ] || echo "${names[$j]}"; done | paste -sd,)
    stub "$others" > "$dir/__macro_cost_${kept[$i]}.rs"
done
for v in "${variants[@]}"; do
    want=$([ "$v" = control ] && echo 0 || echo 1)
    got=$(grep -c '^#\[taskflow(' "$dir/__macro_cost_$v.rs" || true)
    [ "$got" = "$want" ] || { echo "variant $v has $got taskflows, expected $want: the flagship's layout changed" >&2; exit 1; }
done

# A build, its warnings left out (the control does not use the `taskflow` import).
build() { cargo build --release -q -p hpmoe-examples --example "__macro_cost_$1" 2>&1 | sed '/^warning/,/^$/d'; }
echo "warming up (first builds, not timed)..." >&2
for v in "${variants[@]}"; do build "$v"; done

# Wall-clock and CPU (user + sys of cargo and rustc) seconds of each build. CPU time is the
# steadier figure on a machine other processes load; wall time is what a user waits.
declare -A wall cpu
for ((i = 0; i < runs; i++)); do
    line="round $((i + 1))/$runs (wall/cpu s):"
    for v in "${variants[@]}"; do
        touch "$dir/__macro_cost_$v.rs"
        if ! /usr/bin/time -f "%e %U %S" -o "$timing" cargo build --release -q -p hpmoe-examples \
            --example "__macro_cost_$v" 2>/dev/null; then
            build "$v" || exit 1 # fails again, with its messages
        fi
        read -r w u s < "$timing"
        wall[$v]+="$w "
        cpu[$v]+="$(echo "$u + $s" | bc) "
        line+=" $v ${w}/$(echo "$u + $s" | bc)"
    done
    echo "$line" >&2
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.3f", m }'; }
# Per round, variant minus the control of the same round.
diffs() { paste -d' ' <(echo "$2" | tr ' ' '\n') <(echo "$3" | tr ' ' '\n') | awk 'NF == 2 { printf "%f ", $1 - $2 }'; }
echo "release build of the examples crate's $example, $runs rounds, medians in seconds (wall / cpu):"
for v in "${variants[@]}"; do echo "  $v: $(echo "${wall[$v]}" | median) / $(echo "${cpu[$v]}" | median)"; done
for v in "${kept[@]}"; do
    echo "  $v over the control: $(diffs x "${wall[$v]}" "${wall[control]}" | median) / $(diffs x "${cpu[$v]}" "${cpu[control]}" | median)"
done
