#!/usr/bin/env bash
# Rejection rate of a buggy variant over 20 recorded runs (seeds 1..20); see traces/README.md.
# usage: traces/measure_rate.sh VARIANT PROPERTY [record args...]
v=$1; prop=$2; shift 2
R="${SPMCHECK_RECORD:-env PYTHONPATH=$(dirname "$0")/.. python -m spmcheck.checker.record_cli}"
C="${SPMCHECK_CHECK:-env PYTHONPATH=$(dirname "$0")/.. python -m spmcheck.checker.check_cli}"
hit=0
for s in $(seq 1 20); do
  $R --variant $v "$@" --seed $s -o ${TMPDIR:-/tmp}/rate-$v.log 2>/dev/null
  $C ${TMPDIR:-/tmp}/rate-$v.log > ${TMPDIR:-/tmp}/rate-$v.out 2>&1
  grep -q "violated $prop" ${TMPDIR:-/tmp}/rate-$v.out && hit=$((hit+1))
done
echo "$v $* : $hit/20 violated $prop"
